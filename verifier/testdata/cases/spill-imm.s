# An 8-byte immediate store of 40 reloaded is the constant 40.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
stdw [%r10-8], 40
ldxdw %r3, [%r10-8]  # r3 = 40
add %r1, %r3
ldxdw %r0, [%r1+17]  # 40+17+8 = 65
exit
