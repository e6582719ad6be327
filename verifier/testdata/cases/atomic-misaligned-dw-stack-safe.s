# An 8-byte atomic exchange at r10-16.
# mem-size: 64
# want: accept
# max-insns: 5
stdw [%r10-16], 0
stdw [%r10-8], 0
lock xchg [%r10-16], %r2
mov %r0, 0
exit
