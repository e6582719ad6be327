# Return a stack pointer in r0.
# mem-size: 64
# want: reject pointer-leak
# insn: 2
mov %r0, %r10
add %r0, -8
exit  # r0 = r10-8
