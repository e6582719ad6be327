# An offset masked with 0xf0 in a 256-byte memory, loaded 8 bytes at +9.
# mem-size: 256
# want: reject out-of-bounds
# insn: 3
ldxb %r3, [%r1+0]
and %r3, 0xf0       # r3 in {0, 16, ..., 240}
add %r1, %r3
ldxdw %r0, [%r1+9]  # 240+9+8 = 257
exit
