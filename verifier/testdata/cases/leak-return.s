# Return the memory pointer in r0.
# mem-size: 64
# want: reject pointer-leak
# insn: 1
mov %r0, %r1
exit  # r0 is a pointer
