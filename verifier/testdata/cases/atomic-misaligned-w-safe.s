# A 4-byte atomic add at memory offset 4.
# mem-size: 64
# want: accept
# max-insns: 3
lock add32 [%r1+4], %r2
mov %r0, 0
exit
