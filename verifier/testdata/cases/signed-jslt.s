# jslt 61 on an 8-byte value lets negative offsets through.
# mem-size: 64
# want: reject out-of-bounds
# insn: 5
ldxdw %r3, [%r1+0]
jslt %r3, 61, ok   # taken: r3 < 61 signed
mov %r0, 0
exit
ok:
add %r1, %r3
ldxw %r0, [%r1+0]  # offset may be negative
exit
