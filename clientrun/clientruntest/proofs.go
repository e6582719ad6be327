package clientruntest

import (
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/verifier"
)

// Proofs verifies obj as a node does and returns what the verifier proved
// of each handler, for clientrun.New: eligibility, and the bound of the
// handler's run and its access function's.
func Proofs(obj *bytecode.Object) ([]clientrun.Proof, *verifier.Report, error) {
	rep, err := verifier.VerifyObject(obj, verifier.Config{})
	if err != nil {
		return nil, nil, err
	}
	return ProofsOf(obj, rep), rep, nil
}

// ProofsOf turns a verifier's report of obj (verifier.ObjectConfig's
// entries) into proofs.
func ProofsOf(obj *bytecode.Object, rep *verifier.Report) []clientrun.Proof {
	out := make([]clientrun.Proof, len(obj.Handlers))
	for i := range obj.Handlers {
		e := rep.Entries[i]
		out[i] = clientrun.Proof{ClientEligible: e.ClientEligible, ClientReason: e.ClientReason, MaxInsns: e.MaxInsns}
		if a, ok := rep.AccessReport(&obj.Handlers[i]); ok {
			out[i].MaxInsns = max(out[i].MaxInsns, a.MaxInsns)
		}
	}
	return out
}

// NewRunner verifies obj and returns a runner of it: clientrun.New with
// the proofs of a verification in the process.
func NewRunner(obj *bytecode.Object, cfg clientrun.Config) (*clientrun.Runner, error) {
	proofs, _, err := Proofs(obj)
	if err != nil {
		return nil, err
	}
	return clientrun.New(obj, proofs, cfg)
}
