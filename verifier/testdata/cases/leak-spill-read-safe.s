# A spilled scalar read back from the stack and returned.
# mem-size: 64
# want: accept
# max-insns: 3
stxdw [%r10-8], %r2
ldxdw %r0, [%r10-8]
exit
