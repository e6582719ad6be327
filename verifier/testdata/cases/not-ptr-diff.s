# The difference of two pointers is a number.
# mem-size: 64
# want: reject not-a-pointer
# insn: 2
mov %r3, %r1
sub %r3, %r1       # a scalar (0)
ldxb %r0, [%r3+0]  # r3 is a number
exit
