# A pointer spilled on both paths is still a pointer after the merge.
# mem-size: 8
# want: accept
# max-insns: 7
ldxb %r2, [%r1]
stxdw [%r10-8], %r1
jeq %r2, 0, +1
stxdw [%r10-8], %r1
ldxdw %r3, [%r10-8]
ldxb %r0, [%r3]
exit
