# An 8-byte load at an offset checked with jge 58 can end at byte 64.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxb %r3, [%r1+0]
jge %r3, 58, out    # fall-through: r3 <= 57
add %r1, %r3
ldxdw %r0, [%r1+0]  # 57+8 > 64
exit
out:
mov %r0, 0
exit
