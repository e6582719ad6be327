# Spill the memory pointer to the stack instead.
# mem-size: 64
# want: accept
# max-insns: 3
stxdw [%r10-8], %r1  # spills are allowed
mov %r0, 0
exit
