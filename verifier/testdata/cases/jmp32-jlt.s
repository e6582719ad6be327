# jlt32 62 on a 4-byte value lets 61 through to a 4-byte load.
# mem-size: 64
# want: reject out-of-bounds
# insn: 5
ldxw %r3, [%r1+0]
jlt32 %r3, 62, ok  # taken: r3 <= 61
mov %r0, 0
exit
ok:
add %r1, %r3
ldxw %r0, [%r1+0]  # 61+4 > 64
exit
