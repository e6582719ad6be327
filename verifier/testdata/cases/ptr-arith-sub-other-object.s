# Subtract pointers into different objects (memory - stack).
# mem-size: 64
# want: reject pointer-arith
# insn: 1
mov %r0, %r1
sub %r0, %r10  # different objects
exit
