# The lddw skipped only on one branch.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
mov %r0, 0
jeq %r3, 0, +2
lddw %r0, 0x1
exit
