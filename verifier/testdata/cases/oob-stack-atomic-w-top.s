# An aligned 4-byte atomic add at r10+0, above the frame.
# mem-size: 64
# want: reject out-of-bounds
# insn: 1
stw [%r10-4], 0
lock add32 [%r10+0], %r2  # r10+0..r10+3
mov %r0, 0
exit
