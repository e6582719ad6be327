# Store the memory pointer into the memory.
# mem-size: 64
# want: reject pointer-leak
# insn: 0
stxdw [%r1+0], %r1  # a pointer written to memory
mov %r0, 0
exit
