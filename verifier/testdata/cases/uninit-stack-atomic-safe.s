# An atomic add on a stack slot that was written.
# mem-size: 64
# want: accept
# max-insns: 4
stdw [%r10-8], 0
lock add [%r10-8], %r2
mov %r0, 0
exit
