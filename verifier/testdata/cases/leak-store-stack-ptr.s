# Store the frame pointer into the memory.
# mem-size: 64
# want: reject pointer-leak
# insn: 0
stxdw [%r1+8], %r10  # a pointer written to memory
mov %r0, 0
exit
