# A 2-byte load of the lowest bytes of the stack frame.
# mem-size: 64
# want: accept
# max-insns: 3
stdw [%r10-512], 0
ldxh %r0, [%r10-512]  # r10-512..r10-511
exit
