# Compare the memory pointer with the frame pointer.
# mem-size: 64
# want: reject pointer-compare
# insn: 1
mov %r0, 0
jeq %r1, %r10, +1  # different objects
mov %r0, 1
exit
