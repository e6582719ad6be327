# A 4-byte load at an offset checked with jgt 61 can end at byte 64.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxb %r3, [%r1+0]
jgt %r3, 61, out   # fall-through: r3 <= 61
add %r1, %r3
ldxw %r0, [%r1+0]  # 61+4 > 64
exit
out:
mov %r0, 0
exit
