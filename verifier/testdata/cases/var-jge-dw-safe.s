# An 8-byte load at an offset checked with jge 57.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
jge %r3, 57, out    # fall-through: r3 <= 56
add %r1, %r3
ldxdw %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
