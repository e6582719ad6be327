# Branch on r6 after writing it.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r6, [%r1+0]
mov %r0, 0
jeq %r6, 0, +1
mov %r0, 1
exit
