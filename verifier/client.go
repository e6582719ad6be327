package verifier

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// Two properties of an entry beyond safety (spec/verifier.md, Client
// eligibility and access functions):
//
//   - A handler is client-eligible when a caller can reproduce all its
//     effects with one-sided verbs, running it in a VM of its own over
//     region bytes it READs: it reads regions, and changes them only with
//     8-byte atomic adds (FETCH-ADD) and compare-and-swaps (CAS); it
//     calls no helper that sends or exists only on the host.
//   - An access function (Entry.Access) may not touch a region at all,
//     nor call such a helper: it computes ranges from the request, so
//     whoever is about to run the handler can run it first, anywhere.

// verbAtomics are the atomics a client reproduces with one verb each.
var verbAtomics = map[asm.AtomicOp]string{
	asm.AddAtomic: "FETCH-ADD", asm.FetchAdd: "FETCH-ADD", asm.CmpXchg: "CAS",
}

// regionUse records that the entry being analysed reads or writes region
// idx at slot (op says how: "load", "store", "atomic add", "copy") and
// applies the two rules above: an access function is rejected, a handler
// loses client eligibility for anything but a load or a verb atomic.
func (c *checker) regionUse(st *state, slot int, regs []asm.Register, idx int16, write bool, op string, verb bool) *Error {
	if write {
		c.regionsWritten[idx] = true
	} else {
		c.regionsRead[idx] = true
	}
	if c.entry.Access {
		return c.fail(slot, CodeAccessFunction, st, regs, "an access function may not touch a region: %s of %s (it computes ranges from the request alone)", op, c.regionName(idx))
	}
	if write && !verb {
		c.notClient(slot, fmt.Sprintf("%s to %s", op, c.regionName(idx)))
	}
	return nil
}

// helperRule applies the two rules above to a call of helper spec.
func (c *checker) helperRule(st *state, slot int, spec bytecode.HelperSpec) *Error {
	why := ""
	switch {
	case spec.HostOnly:
		why = "calls " + spec.Name + ", which exists only on the host"
	case spec.SendsOffNode:
		why = "calls " + spec.Name + ", which sends from the node"
	default:
		return nil
	}
	if c.entry.Access {
		return c.fail(slot, CodeAccessFunction, st, nil, "an access function may not call %s: it %s", spec.Name, why[len("calls "+spec.Name+", which "):])
	}
	c.notClient(slot, why)
	return nil
}

// notClient records why the entry is not client-eligible; the reason at
// the lowest slot wins, so that the report does not depend on the order
// of the analysis.
func (c *checker) notClient(slot int, why string) {
	if c.clientSlot >= 0 && c.clientSlot <= slot {
		return
	}
	c.clientSlot = slot
	where := fmt.Sprintf("insn %d", slot)
	if p := c.pos(slot); p != "" {
		where += " (" + p + ")"
	}
	c.clientWhy = where + ": " + why
}

func (c *checker) regionName(idx int16) string {
	if int(idx) < len(c.cfg.Regions) && c.cfg.Regions[idx].Name != "" {
		return fmt.Sprintf("region %d (%s)", idx, c.cfg.Regions[idx].Name)
	}
	return fmt.Sprintf("region %d", idx)
}

// atomicName names an atomic operation for reasons: "atomic xchg (4
// bytes)".
func atomicName(aop asm.AtomicOp, size int) string {
	names := map[asm.AtomicOp]string{
		asm.AddAtomic: "add", asm.FetchAdd: "fetch-add", asm.AndAtomic: "and", asm.FetchAnd: "fetch-and",
		asm.OrAtomic: "or", asm.FetchOr: "fetch-or", asm.XorAtomic: "xor", asm.FetchXor: "fetch-xor",
		asm.Xchg: "xchg", asm.CmpXchg: "cmpxchg",
	}
	return fmt.Sprintf("atomic %s (%d bytes)", names[aop], size)
}
