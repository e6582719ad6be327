# An aligned 8-byte atomic add on the last 8 bytes.
# mem-size: 64
# want: accept
# max-insns: 3
lock add [%r1+56], %r2  # bytes 56..63
mov %r0, 0
exit
