# The slot is written before the branch too.
# mem-size: 64
# want: accept
# max-insns: 6
stdw [%r10-8], 0
ldxb %r3, [%r1+0]
jeq %r3, 0, +1
stdw [%r10-8], 1
ldxdw %r0, [%r10-8]
exit
