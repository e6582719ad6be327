# An 8-byte store to the top slot of the stack frame.
# mem-size: 64
# want: accept
# max-insns: 3
stdw [%r10-8], 0  # r10-8..r10-1
mov %r0, 0
exit
