# A byte store one byte before the start of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
stb [%r1-1], 0  # offset -1
mov %r0, 0
exit
