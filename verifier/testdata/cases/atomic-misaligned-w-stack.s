# A 4-byte atomic add at r10-6.
# mem-size: 64
# want: reject misaligned
# insn: 1
stdw [%r10-8], 0
lock add32 [%r10-6], %r2  # not a multiple of 4
mov %r0, 0
exit
