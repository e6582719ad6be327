# A signed lower bound alone (jslt 0 out) leaves the offset unbounded above.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxdw %r3, [%r1+0]
jslt %r3, 0, out   # fall-through: r3 in [0, 2^63-1]
add %r1, %r3
ldxb %r0, [%r1+0]  # no upper bound
exit
out:
mov %r0, 0
exit
