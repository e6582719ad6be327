# An aligned 8-byte atomic exchange below the stack frame.
# mem-size: 64
# want: reject out-of-bounds
# insn: 1
stdw [%r10-512], 0
lock xchg [%r10-520], %r2  # r10-520..r10-513
mov %r0, 0
exit
