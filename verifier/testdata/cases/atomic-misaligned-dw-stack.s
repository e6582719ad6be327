# An 8-byte atomic exchange at r10-12.
# mem-size: 64
# want: reject misaligned
# insn: 2
stdw [%r10-16], 0
stdw [%r10-8], 0
lock xchg [%r10-12], %r2  # r10 is 8-aligned, r10-12 is not
mov %r0, 0
exit
