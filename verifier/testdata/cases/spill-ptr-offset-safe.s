# A pointer at offset 32 spilled and reloaded, loaded at +24.
# mem-size: 64
# want: accept
# max-insns: 5
add %r1, 32
stxdw [%r10-8], %r1
ldxdw %r3, [%r10-8]
ldxdw %r0, [%r3+24]  # 32+24+8 = 64
exit
