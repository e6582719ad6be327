# The result of a division by r2, masked, used as an offset.
# mem-size: 64
# want: accept
# max-insns: 6
ldxdw %r3, [%r1+0]
div %r3, %r2         # r2 = 64
and %r3, 15
add %r1, %r3
ldxdw %r0, [%r1+41]  # 15+41+8 = 64
exit
