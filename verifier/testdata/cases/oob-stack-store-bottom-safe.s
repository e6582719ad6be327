# A byte store to the lowest byte of the stack frame.
# mem-size: 64
# want: accept
# max-insns: 3
stb [%r10-512], 0  # the lowest byte
mov %r0, 0
exit
