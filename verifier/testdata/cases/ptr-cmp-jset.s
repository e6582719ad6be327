# Test bits of the memory pointer with jset.
# mem-size: 64
# want: reject pointer-compare
# insn: 1
mov %r0, 0
jset %r1, 7, +1  # pointer vs constant
mov %r0, 1
exit
