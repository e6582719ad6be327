# A byte load one byte before the start of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
ldxb %r0, [%r1-1]  # offset -1
exit
