# Both branches end with exit.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
mov %r0, 0
jeq %r3, 0, +1
exit
mov %r0, 1
exit
