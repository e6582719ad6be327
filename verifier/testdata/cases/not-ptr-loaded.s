# A value loaded from the memory is a number, not a pointer.
# mem-size: 64
# want: reject not-a-pointer
# insn: 1
ldxdw %r3, [%r1+0]
ldxb %r0, [%r3+0]  # memory holds only scalars
exit
