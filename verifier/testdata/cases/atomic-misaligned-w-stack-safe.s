# A 4-byte atomic add at r10-8.
# mem-size: 64
# want: accept
# max-insns: 4
stdw [%r10-8], 0
lock add32 [%r10-8], %r2
mov %r0, 0
exit
