// Package scalar is the verifier's abstract domain for eBPF scalars: what is
// known about the 64-bit value of a register that holds a number.
//
// A Value is the reduced product of three domains, as in the Linux verifier:
// an unsigned range [Umin, Umax], a signed range [Smin, Smax] and a tristate
// number T (known bits and unknown bits, kernel/bpf/tnum.c), plus, unexported,
// the unsigned and signed ranges of the low 32 bits (the kernel's u32/s32
// bounds, which a zero-extended ALU32 result and JMP32 need). It stands for
// the concrete values that satisfy all of them. Every Value the package returns
// is reduced (each part is narrowed by the others until nothing changes, so
// the four bounds are themselves members) and non-empty: where a set could
// become empty, as on one outcome of a comparison, the function reports
// infeasibility instead.
//
// The operations are those of RFC 9669: ALU gives the result of every ALU and
// ALU32 operation, the byte swaps and the sign-extending moves; Refine narrows
// both operands of a JMP or JMP32 comparison on one of its outcomes; Decide
// tells dead branches; Join and Widen serve the fixpoint at control-flow
// merges and loop heads. 32-bit operations work on 32-bit views of the
// operands (low bits zero- or sign-extended) with the 64-bit transfer
// functions and truncate the result; the low-32 ranges are reduced the same
// way, on the low half sign-extended to 64 bits.
//
// The contract is soundness: whenever a concrete operation (or comparison
// outcome) can happen on members of the inputs, its concrete result (or
// operand pair) is a member of the abstract result. Precision is lost rather
// than soundness wherever an argument does not go through. Constants are
// exact through every operation. The functions never panic, whatever the
// input: a hand-built Value that describes no value at all is read as
// Unknown, and an Op or Cond out of range gives Unknown or refines nothing.
//
// The package knows nothing of registers, pointers, instructions or the
// verifier's state; it imports only the standard library. The verifier maps
// instructions onto ALU and Refine and owns everything else.
package scalar
