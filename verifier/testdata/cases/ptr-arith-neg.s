# Negate the memory pointer.
# mem-size: 64
# want: reject pointer-arith
# insn: 0
neg %r1  # not allowed on a pointer
ldxb %r0, [%r1+0]
exit
