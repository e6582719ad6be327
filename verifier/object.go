package verifier

import (
	"fmt"

	"github.com/naam-project/naam/bytecode"
)

// ObjectConfig completes cfg for verifying obj as a node does at install
// time: each handler is an entry, in order, then each handler's access
// function (AccessEntryName), so that Report.Entries[i] is handler i's;
// the object's regions are the ones the code may address, and rejections
// name the source line from the object's line table. Entries, Regions and
// Position are filled from obj when cfg leaves them empty; Budget, Limits
// and Log stay as given.
func ObjectConfig(obj *bytecode.Object, cfg Config) Config {
	if cfg.Entries == nil {
		for _, h := range obj.Handlers {
			cfg.Entries = append(cfg.Entries, Entry{Name: h.Name, Slot: h.Entry})
		}
		for _, h := range obj.Handlers {
			if h.HasAccess() {
				cfg.Entries = append(cfg.Entries, Entry{Name: AccessEntryName(h.Name), Slot: h.Access, Access: true})
			}
		}
	}
	if cfg.Regions == nil {
		for _, r := range obj.Regions {
			cfg.Regions = append(cfg.Regions, Region{Name: r.Name, Size: r.Size, Writable: r.Writable})
		}
	}
	if cfg.Position == nil {
		cfg.Position = func(slot int) string {
			if l, ok := obj.Position(slot); ok {
				return fmt.Sprintf("%s:%d", l.File, l.Line)
			}
			return ""
		}
	}
	return cfg
}

// VerifyObject verifies obj's code under ObjectConfig(obj, cfg). An object
// whose code does not decode is an error, not a rejection.
func VerifyObject(obj *bytecode.Object, cfg Config) (*Report, error) {
	insns, err := obj.Insns()
	if err != nil {
		return nil, err
	}
	return Verify(insns, ObjectConfig(obj, cfg))
}

// AccessEntryName is the entry name ObjectConfig gives the access
// function of handler name: "get.access".
func AccessEntryName(handler string) string { return handler + ".access" }

// AccessReport returns the report of handler h's access function, if the
// object has one and rep comes from ObjectConfig.
func (r *Report) AccessReport(h *bytecode.Handler) (EntryReport, bool) {
	if !h.HasAccess() {
		return EntryReport{}, false
	}
	for _, e := range r.Entries {
		if e.Access && e.Slot == h.Access && e.Name == AccessEntryName(h.Name) {
			return e, true
		}
	}
	return EntryReport{}, false
}
