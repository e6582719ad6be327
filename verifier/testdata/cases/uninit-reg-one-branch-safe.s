# r9 is written before the branch.
# mem-size: 64
# want: accept
# max-insns: 6
mov %r9, 0
ldxb %r3, [%r1+0]
jeq %r3, 0, +1
mov %r9, 1
mov %r0, %r9
exit
