# A byte store to the first byte of the memory.
# mem-size: 64
# want: accept
# max-insns: 3
stb [%r1+0], 0  # offset 0
mov %r0, 0
exit
