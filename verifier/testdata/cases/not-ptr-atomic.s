# An atomic add through r2, a scalar.
# mem-size: 64
# want: reject not-a-pointer
# insn: 0
lock add [%r2+0], %r2  # r2 is the memory size, a number
mov %r0, 0
exit
