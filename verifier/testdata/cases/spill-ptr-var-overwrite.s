# A byte store at an unknown stack offset may miss the spilled pointer's
# low byte, so that byte still holds address bits: reading it is refused.
# mem-size: 8
# want: reject pointer-leak
# insn: 7
mov %r2, %r1
add %r2, 0x41
stxdw [%r10-16], %r2
ldxb %r3, [%r1]
and %r3, 7
add %r3, %r10
stb [%r3-16], 0      # writes one of fp-16..fp-9
ldxb %r0, [%r10-16]  # may be the pointer's low byte
exit
