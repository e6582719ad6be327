# An aligned 8-byte atomic exchange on the lowest stack slot.
# mem-size: 64
# want: accept
# max-insns: 4
stdw [%r10-512], 0
lock xchg [%r10-512], %r2  # r10-512..r10-505
mov %r0, 0
exit
