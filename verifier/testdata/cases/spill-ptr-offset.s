# A pointer at offset 32 spilled and reloaded keeps the offset 32.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
add %r1, 32
stxdw [%r10-8], %r1
ldxdw %r3, [%r10-8]
ldxdw %r0, [%r3+25]  # 32+25+8 = 65
exit
