# A zero-extended byte is never negative, so a signed check bounds it.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]  # r3 in [0, 255]
jsgt %r3, 60, out  # fall-through: r3 in [0, 60]
add %r1, %r3
ldxw %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
