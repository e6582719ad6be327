# An 8-byte fetch-add just before the start of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
lock fetch add [%r1-8], %r2  # bytes -8..-1
mov %r0, %r2
exit
