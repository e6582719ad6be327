# Take the memory pointer modulo 8.
# mem-size: 64
# want: reject pointer-arith
# insn: 0
mod %r1, 8  # not allowed on a pointer
ldxb %r0, [%r1+0]
exit
