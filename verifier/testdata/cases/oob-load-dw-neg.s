# A moved pointer reaches one byte before the memory with a negative offset.
# mem-size: 64
# want: reject out-of-bounds
# insn: 1
add %r1, 16
ldxdw %r0, [%r1-17]  # 16-17 = -1
exit
