# An aligned 4-byte atomic add on the top 4 bytes.
# mem-size: 64
# want: accept
# max-insns: 4
stw [%r10-4], 0
lock add32 [%r10-4], %r2  # r10-4..r10-1
mov %r0, 0
exit
