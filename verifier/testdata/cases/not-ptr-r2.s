# Load through r2, the memory size.
# mem-size: 64
# want: reject not-a-pointer
# insn: 0
ldxb %r0, [%r2+0]  # r2 is a scalar
exit
