# A 4-byte atomic exchange just before the start of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
lock xchg32 [%r1-4], %r2  # bytes -4..-1
mov %r0, 0
exit
