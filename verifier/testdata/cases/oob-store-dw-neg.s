# An 8-byte immediate store starting one byte before the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
stdw [%r1-1], 0  # bytes -1..6
mov %r0, 0
exit
