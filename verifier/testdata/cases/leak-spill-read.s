# A spilled pointer read back from the stack and returned.
# mem-size: 64
# want: reject pointer-leak
# insn: 2
stxdw [%r10-8], %r1
ldxdw %r0, [%r10-8]
exit  # r0 is the pointer
