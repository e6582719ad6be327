# mov (64-bit) keeps the unknown upper half, so jgt32 does not bound it.
# mem-size: 64
# want: reject out-of-bounds
# insn: 4
ldxdw %r3, [%r1+0]
mov %r3, %r3        # 64-bit move: upper half still unknown
jgt32 %r3, 60, out
add %r1, %r3
ldxw %r0, [%r1+0]   # the upper half of the offset is unknown
exit
out:
mov %r0, 0
exit
