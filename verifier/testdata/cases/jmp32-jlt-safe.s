# jlt32 61 on a 4-byte value bounds it to 0..60.
# mem-size: 64
# want: accept
# max-insns: 5
ldxw %r3, [%r1+0]
jlt32 %r3, 61, ok  # taken: r3 <= 60
mov %r0, 0
exit
ok:
add %r1, %r3
ldxw %r0, [%r1+0]
exit
