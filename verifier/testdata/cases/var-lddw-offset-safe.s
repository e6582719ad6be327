# A 64-bit constant from lddw as an offset.
# mem-size: 64
# want: accept
# max-insns: 4
lddw %r3, 0x10
add %r1, %r3
ldxdw %r0, [%r1+40]  # 16+40+8 = 64
exit
