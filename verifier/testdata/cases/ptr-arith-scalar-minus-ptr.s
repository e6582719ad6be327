# Subtract a pointer from a scalar.
# mem-size: 64
# want: reject pointer-arith
# insn: 1
mov %r0, 64
sub %r0, %r1  # scalar - pointer
exit
