# An offset checked with jgt r2 can equal r2 (the memory size).
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxb %r3, [%r1+0]
jgt %r3, %r2, out  # fall-through: r3 <= 64
add %r1, %r3
ldxb %r0, [%r1+0]  # offset 64 possible
exit
out:
mov %r0, 0
exit
