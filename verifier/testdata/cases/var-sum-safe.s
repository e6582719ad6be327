# The sum of two offsets masked with 31 (0..62) plus a 2-byte load at +0.
# mem-size: 64
# want: accept
# max-insns: 8
ldxb %r3, [%r1+0]
ldxb %r4, [%r1+1]
and %r3, 31
and %r4, 31
add %r3, %r4       # r3 in [0, 62]
add %r1, %r3
ldxh %r0, [%r1+0]  # 62+2 = 64
exit
