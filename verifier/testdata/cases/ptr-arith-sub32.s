# A 32-bit subtract on the memory pointer.
# mem-size: 64
# want: reject pointer-arith
# insn: 0
sub32 %r1, -8  # not allowed on a pointer
ldxb %r0, [%r1+0]
exit
