# Compare the frame pointer with a constant.
# mem-size: 64
# want: reject pointer-compare
# insn: 1
mov %r0, 0
jlt %r10, 4096, +1  # pointer vs constant
mov %r0, 1
exit
