# An atomic add through r1, the memory pointer.
# mem-size: 64
# want: accept
# max-insns: 3
lock add [%r1+0], %r2
mov %r0, 0
exit
