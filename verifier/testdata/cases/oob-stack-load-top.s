# An 8-byte load from r10-7 reaches one byte above the frame.
# mem-size: 64
# want: reject out-of-bounds
# insn: 1
stdw [%r10-8], 0
ldxdw %r0, [%r10-7]  # r10-7..r10+0
exit
