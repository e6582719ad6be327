# An 8-byte load of the top slot after it was written.
# mem-size: 64
# want: accept
# max-insns: 3
stdw [%r10-8], 0
ldxdw %r0, [%r10-8]  # r10-8..r10-1
exit
