# An offset checked against a register holding 61, then a 4-byte load.
# mem-size: 64
# want: reject out-of-bounds
# insn: 4
ldxb %r3, [%r1+0]
mov %r4, 61
jgt %r3, %r4, out  # fall-through: r3 <= 61
add %r1, %r3
ldxw %r0, [%r1+0]  # 61+4 > 64
exit
out:
mov %r0, 0
exit
