# An aligned 8-byte atomic add just past the end of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
lock add [%r1+64], %r2  # bytes 64..71, aligned but outside
mov %r0, 0
exit
