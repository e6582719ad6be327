# An 8-byte register store one byte below the stack frame.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
stxdw [%r10-513], %r2  # r10-513..r10-506
mov %r0, 0
exit
