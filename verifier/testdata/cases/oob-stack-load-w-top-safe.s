# A 4-byte load of the top 4 bytes of the frame.
# mem-size: 64
# want: accept
# max-insns: 3
stdw [%r10-8], 0
ldxw %r0, [%r10-4]  # r10-4..r10-1
exit
