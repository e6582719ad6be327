# An offset checked with jge r2 is below the memory size.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
jge %r3, %r2, out  # fall-through: r3 < 64
add %r1, %r3
ldxb %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
