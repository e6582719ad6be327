# A 64-bit constant from lddw as an offset, one byte too far.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
lddw %r3, 0x10
add %r1, %r3
ldxdw %r0, [%r1+41]  # 16+41+8 = 65 (lddw takes slots 0 and 1)
exit
