package bytecode

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Validate checks everything about an object that does not need abstract
// interpretation (spec/object.md, "Validation"): the magic and version; the
// code decodes and passes Validate, and every lddw region[IDX] names a
// region; handlers have unique non-empty names, unique ids and entries on
// instruction slots; regions have unique non-empty names and sizes
// 1..MaxRegionSize, at most MaxRegions of them; the line table is sorted and
// inside the code; argument and result fields agree with their types and do
// not overlap. The first problem found is returned as an *ObjectError.
func (o *Object) Validate() error {
	if o.Magic != ObjectMagic {
		return objectErrorf("magic", "%q is not %q", o.Magic, ObjectMagic)
	}
	if o.Version != ObjectVersion && o.Version != ObjectVersionNoAccess {
		return objectErrorf("version", "%d is not supported (only %d or %d)", o.Version, ObjectVersionNoAccess, ObjectVersion)
	}
	if len(o.Regions) > MaxRegions {
		return objectErrorf("regions", "%d regions, at most %d are allowed", len(o.Regions), MaxRegions)
	}
	insns, err := Decode(o.Code)
	if err != nil {
		return &ObjectError{Field: "code", Msg: err.Error(), Err: err}
	}
	offsets, total := Slots(insns)
	wide := make(map[int]bool) // second slots of lddw
	for i := range insns {
		if insns[i].Width() == 2 {
			wide[offsets[i]+1] = true
		}
		if RawOpcode(&insns[i]) == OpLdDW && insns[i].Src == PseudoMapValue {
			if idx := uint32(insns[i].Constant); uint64(idx) >= uint64(len(o.Regions)) {
				err := insnErrorf(offsets[i], "lddw region[%d], but the object has %d regions", idx, len(o.Regions))
				return &ObjectError{Field: "code", Msg: err.Error(), Err: err}
			}
		}
	}
	slot := func(field string, s int) error {
		switch {
		case s < 0 || s >= total:
			return objectErrorf(field, "slot %d is outside the code (0..%d)", s, total-1)
		case wide[s]:
			return objectErrorf(field, "slot %d is the second slot of lddw", s)
		}
		return nil
	}

	names := make(map[string]int)
	ids := make(map[uint32]int)
	for i, h := range o.Handlers {
		path := fmt.Sprintf("handlers[%d]", i)
		if err := unique(names, h.Name, i, path+".name", "handlers"); err != nil {
			return err
		}
		if first, dup := ids[h.ID]; dup {
			return objectErrorf(path+".id", "%d used twice (first at handlers[%d])", h.ID, first)
		}
		ids[h.ID] = i
		if err := slot(path+".entry", h.Entry); err != nil {
			return err
		}
		switch {
		case h.MaxRanges == 0 && h.Access != 0:
			return objectErrorf(path+".access", "slot %d, but max_ranges is 0 (no access function)", h.Access)
		case h.MaxRanges > 0 && o.Version == ObjectVersionNoAccess:
			return objectErrorf(path+".max_ranges", "%d, but version %d objects have no access functions", h.MaxRanges, ObjectVersionNoAccess)
		case h.MaxRanges > MaxAccessRanges:
			return objectErrorf(path+".max_ranges", "%d is outside 0..%d", h.MaxRanges, MaxAccessRanges)
		case h.MaxRanges > 0:
			if err := slot(path+".access", h.Access); err != nil {
				return err
			}
		}
		if err := validateFields(h.Args, path+".args"); err != nil {
			return err
		}
		if err := validateFields(h.Results, path+".results"); err != nil {
			return err
		}
	}

	clear(names)
	for i, r := range o.Regions {
		path := fmt.Sprintf("regions[%d]", i)
		if err := unique(names, r.Name, i, path+".name", "regions"); err != nil {
			return err
		}
		if r.Size == 0 || r.Size > MaxRegionSize {
			return objectErrorf(path+".size", "%d is outside 1..%d", r.Size, uint64(MaxRegionSize))
		}
	}

	for i, l := range o.Lines {
		path := fmt.Sprintf("lines[%d]", i)
		if err := slot(path+".insn", l.Insn); err != nil {
			return err
		}
		if i > 0 && l.Insn <= o.Lines[i-1].Insn {
			return objectErrorf(path+".insn", "slot %d does not follow lines[%d].insn (%d): lines must be sorted by insn, without repeats", l.Insn, i-1, o.Lines[i-1].Insn)
		}
		switch {
		case l.Line < 0:
			return objectErrorf(path+".line", "%d is negative", l.Line)
		case l.Col < 0:
			return objectErrorf(path+".col", "%d is negative", l.Col)
		case l.Line == 0 && (l.File != "" || l.Col != 0):
			return objectErrorf(path, "line 0 (no position) with a file or column")
		case l.Line > 0 && l.File == "":
			return objectErrorf(path+".file", "empty")
		}
	}

	clear(names)
	for i, s := range o.Sources {
		if err := unique(names, s.Name, i, fmt.Sprintf("sources[%d].name", i), "sources"); err != nil {
			return err
		}
	}
	return nil
}

// unique checks that name is non-empty and not yet in seen, then adds it.
func unique(seen map[string]int, name string, i int, path, list string) error {
	if name == "" {
		return objectErrorf(path, "empty")
	}
	if first, dup := seen[name]; dup {
		return objectErrorf(path, "%q defined twice (first at %s[%d])", name, list, first)
	}
	seen[name] = i
	return nil
}

// validateFields checks one argument or result layout.
func validateFields(fields []Field, path string) error {
	list := path[strings.LastIndexByte(path, '.')+1:] // "args" or "results"
	names := make(map[string]int)
	for i, f := range fields {
		fpath := fmt.Sprintf("%s[%d]", path, i)
		if err := unique(names, f.Name, i, fpath+".name", list); err != nil {
			return err
		}
		if err := checkFieldSize(f.Type, f.Size); err != nil {
			return objectErrorf(fpath+".type", "%v", err)
		}
		if end := uint64(f.Offset) + uint64(f.Size); end > 1<<32 {
			return objectErrorf(fpath+".offset", "field ends at byte %d, past 2^32", end)
		}
	}
	// Overlap: sort the non-empty fields by offset and compare neighbours.
	order := make([]int, 0, len(fields))
	for i := range fields {
		if fields[i].Size > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return fields[order[a]].Offset < fields[order[b]].Offset })
	for k := 1; k < len(order); k++ {
		prev, cur := fields[order[k-1]], fields[order[k]]
		if uint64(prev.Offset)+uint64(prev.Size) > uint64(cur.Offset) {
			first, second := min(order[k-1], order[k]), max(order[k-1], order[k])
			return objectErrorf(fmt.Sprintf("%s[%d]", path, second), "%q (bytes %s) overlaps %s[%d] %q (bytes %s)",
				fields[second].Name, byteRange(fields[second]), list, first, fields[first].Name, byteRange(fields[first]))
		}
	}
	return nil
}

func byteRange(f Field) string {
	return fmt.Sprintf("%d..%d", f.Offset, uint64(f.Offset)+uint64(f.Size))
}

// scalarSizes are the sizes of the built-in field types.
var scalarSizes = map[string]uint64{
	"u8": 1, "u16": 2, "u32": 4, "u64": 8,
	"i8": 1, "i16": 2, "i32": 4, "i64": 8,
	"bool": 1,
}

// checkFieldSize checks that a field of type typ can have size bytes: exactly
// the type's size when it is known, and a multiple of the array lengths when
// the element is a struct (whose size the object does not record).
func checkFieldSize(typ string, size uint32) error {
	count, elem, err := parseFieldType(typ)
	if err != nil {
		return err
	}
	if es, ok := scalarSizes[elem]; ok {
		if want := count * es; want != uint64(size) {
			return fmt.Errorf("%s is %d bytes, but size is %d", typ, want, size)
		}
		return nil
	}
	switch {
	case count == 0 && size != 0:
		return fmt.Errorf("%s is 0 bytes, but size is %d", typ, size)
	case count != 0 && size == 0:
		return fmt.Errorf("%s cannot be 0 bytes", typ)
	case count != 0 && uint64(size)%count != 0:
		return fmt.Errorf("size %d is not a multiple of the %d elements of %s", size, count, typ)
	}
	return nil
}

// errTypeTooLarge stands for array types larger than any field can be.
var errTypeTooLarge = errors.New("type has more than 2^32 elements")

// parseFieldType splits typ into its element type (a scalar type or a
// struct name) and the product of its array lengths: "[[u8; 4]; 2]" is 8 u8.
func parseFieldType(typ string) (count uint64, elem string, err error) {
	count, t := 1, typ
	zero := false
	for strings.HasPrefix(t, "[") {
		semi := strings.LastIndex(t, "; ")
		if !strings.HasSuffix(t, "]") || semi < 0 {
			return 0, "", fmt.Errorf("%q is not a type (arrays are written [T; N])", typ)
		}
		n, err := strconv.ParseUint(t[semi+2:len(t)-1], 10, 32)
		if err != nil || strconv.FormatUint(n, 10) != t[semi+2:len(t)-1] {
			return 0, "", fmt.Errorf("%q: array length %q is not a decimal number below 2^32", typ, t[semi+2:len(t)-1])
		}
		if n == 0 {
			zero = true
		} else if count *= n; count > 1<<32 {
			count = 1<<32 + 1 // saturate: stays too large and cannot overflow
		}
		t = t[1:semi]
	}
	if zero {
		count = 0
	}
	if count > 1<<32 {
		return 0, "", fmt.Errorf("%q: %w", typ, errTypeTooLarge)
	}
	if _, ok := scalarSizes[t]; !ok && !isIdent(t) {
		return 0, "", fmt.Errorf("%q is not a type (want u8…u64, i8…i64, bool, [T; N] or a struct name)", typ)
	}
	return count, t, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
