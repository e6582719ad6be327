# Load an 8-byte stack slot after writing it.
# mem-size: 64
# want: accept
# max-insns: 3
stdw [%r10-8], 0
ldxdw %r0, [%r10-8]
exit
