# An aligned 8-byte atomic add at r10+0, above the frame.
# mem-size: 64
# want: reject out-of-bounds
# insn: 1
stdw [%r10-8], 0
lock add [%r10+0], %r2  # r10+0..r10+7
mov %r0, 0
exit
