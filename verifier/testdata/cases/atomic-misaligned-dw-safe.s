# An 8-byte atomic add at memory offset 8.
# mem-size: 64
# want: accept
# max-insns: 3
lock add [%r1+8], %r2
mov %r0, 0
exit
