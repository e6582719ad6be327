# Arithmetic-shift the memory pointer right.
# mem-size: 64
# want: reject pointer-arith
# insn: 0
arsh %r1, 1  # not allowed on a pointer
ldxb %r0, [%r1+0]
exit
