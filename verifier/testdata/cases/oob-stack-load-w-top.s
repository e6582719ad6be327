# A 4-byte load from r10-3 reaches one byte above the frame.
# mem-size: 64
# want: reject out-of-bounds
# insn: 1
stdw [%r10-8], 0
ldxw %r0, [%r10-3]  # r10-3..r10+0
exit
