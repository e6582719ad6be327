# The same instruction skipped only on one branch.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
mov %r0, 0
jeq %r3, 0, +1
mov %r0, 1
exit
