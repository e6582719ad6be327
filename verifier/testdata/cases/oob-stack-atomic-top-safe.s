# An aligned 8-byte atomic add on the top stack slot.
# mem-size: 64
# want: accept
# max-insns: 4
stdw [%r10-8], 0
lock add [%r10-8], %r2  # r10-8..r10-1, written before
mov %r0, 0
exit
