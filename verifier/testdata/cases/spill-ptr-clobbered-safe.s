# A byte store next to a spilled pointer leaves it intact.
# mem-size: 64
# want: accept
# max-insns: 5
stxdw [%r10-8], %r1
stb [%r10-9], 0      # the byte below the slot
ldxdw %r3, [%r10-8]
ldxb %r0, [%r3+0]
exit
