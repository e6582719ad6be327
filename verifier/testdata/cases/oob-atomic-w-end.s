# An aligned 4-byte atomic add just past the end of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
lock add32 [%r1+64], %r2  # bytes 64..67
mov %r0, 0
exit
