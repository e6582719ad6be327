# A pointer spilled on one path and plain data on the other: after the
# merge the slot may hold an address, so reading it as anything is refused.
# mem-size: 8
# want: reject pointer-leak
# insn: 5
ldxb %r2, [%r1]
stw [%r10-8], 0
stw [%r10-4], 0
jeq %r2, 0, +1
stxdw [%r10-8], %r1  # pointer spill on one path only
ldxdw %r0, [%r10-8]
exit
