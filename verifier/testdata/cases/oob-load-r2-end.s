# r1 + r2 points one past the end: loading there is out of bounds.
# mem-size: 64
# want: reject out-of-bounds
# insn: 1
add %r1, %r2       # r2 = mem-size = 64
ldxb %r0, [%r1+0]  # offset 64
exit
