package xdp

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/nicrt/wire"
)

// The built-in verbs (spec/nic.md, Built-in verbs) as program bodies. A
// verb program holds the verb's code once per region it may name, the
// region's id, tenant, key, size and rights as constants, and the region
// as a map value: the checks are those of nicrt's, in the same order,
// with the same statuses.

// verbRegion is a region as the verb programs see it.
type verbRegion struct {
	id       uint32
	tenant   uint32
	key      uint64
	size     uint64
	writable bool
	mapName  string
}

// rtStatus is the body's r0 for runtime status st: -(2^31 + st).
func rtStatus(st int) int64 { return -(int64(wire.StatusRuntime) + int64(st)) }

// verbBody emits verb over regions. The dispatcher has checked that the
// region exists here (naam_regions); a request whose region is none of
// these (one unregistered since) gets unknown region, as in nicrt.
func verbBody(verb int, regions []verbRegion, l layout) programBody {
	return func(e *emitter) {
		req := int16(scrReq + wire.HeaderSize)
		rep := int32(l.scrRep + wire.HeaderSize)
		out := e.fresh("verb_out")
		// failTo is the label that returns runtime status st, emitted at
		// the end for the statuses used.
		type failure struct {
			label string
			st    int
		}
		var fails []failure
		failTo := func(st int) string {
			for _, f := range fails {
				if f.st == st {
					return f.label
				}
			}
			fails = append(fails, failure{e.fresh(fmt.Sprintf("verb_st%d", st)), st})
			return fails[len(fails)-1].label
		}
		bad := failTo(statusBadRequest)
		// r8 = payload length, r2 = the length field.
		e.add(
			asm.LoadMem(asm.R8, asm.R7, metaPlen, asm.Word),
			asm.JLT.Imm(asm.R8, verbHeader, bad),
			asm.LoadMem(asm.R2, asm.R7, req+12, asm.Word),
		)
		switch verb {
		case verbRead:
			e.add(asm.JNE.Imm(asm.R8, verbHeader, bad))
		case verbWrite:
			e.add(
				asm.Mov.Reg(asm.R3, asm.R2),
				asm.Add.Imm(asm.R3, verbHeader),
				asm.JNE.Reg(asm.R8, asm.R3, bad),
				// the same bound for the kernel, which does not link r2 to r8
				asm.JGT.Imm(asm.R2, int32(l.maxPayload), bad),
			)
		case verbCAS:
			e.add(asm.JNE.Imm(asm.R8, verbHeader+16, bad), asm.JNE.Imm(asm.R2, 8, bad))
		case verbFetchAdd:
			e.add(asm.JNE.Imm(asm.R8, verbHeader+8, bad), asm.JNE.Imm(asm.R2, 8, bad))
		}
		e.add(
			asm.Mov.Reg(asm.R8, asm.R2), // r8 = length from here on
			asm.LoadMem(asm.R1, asm.R7, req+8, asm.Word),
			asm.LoadMem(asm.R9, asm.R7, metaTenant, asm.Word),
		)
		labels := make([]string, len(regions))
		for i, r := range regions {
			labels[i] = e.fresh(fmt.Sprintf("verb_region%d", r.id))
			e.add(asm.JEq.Imm32(asm.R1, u32imm(r.id), labels[i]))
		}
		e.add(asm.Ja.Label(failTo(statusUnknownRegion)))
		atomic := verb == verbCAS || verb == verbFetchAdd
		for i, r := range regions {
			e.label(labels[i])
			e.add(
				asm.JNE.Imm32(asm.R9, u32imm(r.tenant), failTo(statusForeignRegion)),
				asm.LoadMem(asm.R3, asm.R7, req+0, asm.DWord),
				asm.LoadImm(asm.R4, int64(r.key), asm.DWord),
				asm.JNE.Reg(asm.R3, asm.R4, failTo(statusWrongKey)),
			)
			if verb != verbRead && !r.writable {
				e.add(asm.Ja.Label(failTo(statusReadOnly)))
				continue
			}
			if verb == verbRead {
				e.add(asm.JGT.Imm(asm.R8, int32(l.maxReply), failTo(statusTooLarge)))
			}
			oob := failTo(statusOutOfBounds)
			// off > size, or length > size - off: out of bounds
			e.add(
				asm.LoadMem(asm.R3, asm.R7, req+16, asm.DWord),
				asm.LoadImm(asm.R4, int64(r.size), asm.DWord),
				asm.JGT.Reg(asm.R3, asm.R4, oob),
				asm.Sub.Reg(asm.R4, asm.R3),
				asm.JGT.Reg(asm.R8, asm.R4, oob),
			)
			if atomic {
				if r.size < 8 {
					e.add(asm.Ja.Label(oob))
					continue
				}
				e.add(
					// the same bound for the kernel
					asm.LoadImm(asm.R4, int64(r.size-8), asm.DWord),
					asm.JGT.Reg(asm.R3, asm.R4, oob),
					asm.Mov.Reg(asm.R4, asm.R3),
					asm.And.Imm(asm.R4, 7),
					asm.JNE.Imm(asm.R4, 0, failTo(statusMisaligned)),
					asm.And.Imm(asm.R3, -8), // the same offset, 8-aligned for the kernel
				)
			}
			e.add(mapValue(asm.R5, r.mapName, 0), asm.Add.Reg(asm.R5, asm.R3))
			switch verb {
			case verbRead:
				e.add(
					asm.Mov.Reg(asm.R1, asm.R7),
					asm.Add.Imm(asm.R1, rep),
					asm.Mov.Reg(asm.R2, asm.R8),
					asm.Mov.Reg(asm.R3, asm.R5),
					asm.FnProbeReadKernel.Call(),
					asm.Mov.Reg(asm.R0, asm.R8),
				)
			case verbWrite:
				e.add(
					asm.Mov.Reg(asm.R1, asm.R5),
					asm.Mov.Reg(asm.R2, asm.R8),
					asm.Mov.Reg(asm.R3, asm.R7),
					asm.Add.Imm(asm.R3, int32(req)+verbHeader),
					asm.FnProbeReadKernel.Call(),
					asm.Mov.Imm(asm.R0, 0),
				)
			case verbCAS:
				e.add(
					asm.LoadMem(asm.R0, asm.R7, req+verbHeader, asm.DWord),
					asm.LoadMem(asm.R1, asm.R7, req+verbHeader+8, asm.DWord),
					atomicInsn(asm.CmpXchg, asm.R5, asm.R1, asm.DWord, 0),
					asm.StoreMem(asm.R7, int16(rep), asm.R0, asm.DWord),
					asm.Mov.Imm(asm.R0, 8),
				)
			case verbFetchAdd:
				e.add(
					asm.LoadMem(asm.R1, asm.R7, req+verbHeader, asm.DWord),
					atomicInsn(asm.FetchAdd, asm.R5, asm.R1, asm.DWord, 0),
					asm.StoreMem(asm.R7, int16(rep), asm.R1, asm.DWord),
					asm.Mov.Imm(asm.R0, 8),
				)
			}
			e.add(asm.Ja.Label(out))
		}
		for _, f := range fails {
			e.label(f.label)
			e.add(asm.LoadImm(asm.R0, rtStatus(f.st), asm.DWord), asm.Ja.Label(out))
		}
		e.label(out)
		// The next instruction is the template's; the label needs one of
		// its own.
		e.add(asm.Mov.Reg(asm.R0, asm.R0))
	}
}
