# A 4-byte load at an offset checked with jgt 60.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
jgt %r3, 60, out   # fall-through: r3 <= 60
add %r1, %r3
ldxw %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
