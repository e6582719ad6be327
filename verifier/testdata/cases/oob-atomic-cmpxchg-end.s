# An 8-byte compare-and-exchange just past the end of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 1
mov %r0, 0
lock cmpxchg [%r1+64], %r2  # bytes 64..71
exit
