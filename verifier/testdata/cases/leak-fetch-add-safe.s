# An atomic add of a scalar.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r3, 1
lock fetch add [%r1+0], %r3
mov %r0, 0
exit
