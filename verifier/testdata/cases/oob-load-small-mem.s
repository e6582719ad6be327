# A 2-byte load from a 1-byte memory.
# mem-size: 1
# want: reject out-of-bounds
# insn: 0
ldxh %r0, [%r1+0]  # needs 2 bytes, the memory has 1
exit
