# A loaded 8-byte value shifted right by 57 (0..127) as an offset.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxdw %r3, [%r1+0]
rsh %r3, 57        # r3 in [0, 127]
add %r1, %r3
ldxb %r0, [%r1+0]  # offset up to 127
exit
