# An 8-byte load at an offset masked with 57 can end at byte 64.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxb %r3, [%r1+0]
and %r3, 57         # r3 up to 57
add %r1, %r3
ldxdw %r0, [%r1+0]  # 57+8 > 64
exit
