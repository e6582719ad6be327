# A spilled and reloaded memory pointer can be loaded through.
# mem-size: 64
# want: accept
# max-insns: 4
stxdw [%r10-8], %r1
ldxdw %r3, [%r10-8]  # the memory pointer again
ldxb %r0, [%r3+63]
exit
