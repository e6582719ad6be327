# An 8-byte immediate store of 40 reloaded as an offset.
# mem-size: 64
# want: accept
# max-insns: 5
stdw [%r10-8], 40
ldxdw %r3, [%r10-8]  # r3 = 40
add %r1, %r3
ldxdw %r0, [%r1+16]  # 40+16+8 = 64
exit
