# An 8-byte register store to the lowest slot of the stack frame.
# mem-size: 64
# want: accept
# max-insns: 3
stxdw [%r10-512], %r2  # r10-512..r10-505
mov %r0, 0
exit
