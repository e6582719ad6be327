# A 2-byte load one byte below the stack frame.
# mem-size: 64
# want: reject out-of-bounds
# insn: 1
stdw [%r10-512], 0
ldxh %r0, [%r10-513]  # r10-513..r10-512
exit
