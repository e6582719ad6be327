# An 8-byte store at r10+0, above the top of the stack frame.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
stdw [%r10+0], 0  # the frame is [r10-512, r10)
mov %r0, 0
exit
