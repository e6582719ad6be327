# A spilled and reloaded memory pointer keeps its object and offset.
# mem-size: 64
# want: reject out-of-bounds
# insn: 2
stxdw [%r10-8], %r1
ldxdw %r3, [%r10-8]  # the memory pointer again
ldxb %r0, [%r3+64]   # still a 64-byte object
exit
