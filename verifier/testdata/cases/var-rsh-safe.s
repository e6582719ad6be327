# A loaded 8-byte value shifted right by 58 (0..63) as an offset.
# mem-size: 64
# want: accept
# max-insns: 5
ldxdw %r3, [%r1+0]
rsh %r3, 58        # r3 in [0, 63]
add %r1, %r3
ldxb %r0, [%r1+0]
exit
