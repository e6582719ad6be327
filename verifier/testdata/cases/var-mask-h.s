# A 2-byte load at an offset masked with 63 can end at byte 64.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxb %r3, [%r1+0]
and %r3, 63        # r3 up to 63
add %r1, %r3
ldxh %r0, [%r1+0]  # 63+2 > 64
exit
