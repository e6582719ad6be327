# jlt 61 on an 8-byte value bounds it to 0..60.
# mem-size: 64
# want: accept
# max-insns: 5
ldxdw %r3, [%r1+0]
jlt %r3, 61, ok    # taken: r3 < 61 unsigned
mov %r0, 0
exit
ok:
add %r1, %r3
ldxw %r0, [%r1+0]
exit
