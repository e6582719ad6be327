# A pointer spilled, reloaded, then stored into the memory.
# mem-size: 64
# want: reject pointer-leak
# insn: 2
stxdw [%r10-8], %r1
ldxdw %r3, [%r10-8]  # the pointer
stxdw [%r1+0], %r3   # a pointer written to memory
mov %r0, 0
exit
