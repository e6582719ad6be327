# A masked scalar spilled and reloaded keeps its range 0..63.
# mem-size: 64
# want: reject out-of-bounds
# insn: 5
ldxb %r3, [%r1+0]
and %r3, 63
stxdw [%r10-8], %r3
ldxdw %r4, [%r10-8]  # r4 in [0, 63]
add %r1, %r4
ldxb %r0, [%r1+1]    # 63+1 = 64
exit
