# An offset checked against a register holding 60, then a 4-byte load.
# mem-size: 64
# want: accept
# max-insns: 6
ldxb %r3, [%r1+0]
mov %r4, 60
jgt %r3, %r4, out  # fall-through: r3 <= 60
add %r1, %r3
ldxw %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
