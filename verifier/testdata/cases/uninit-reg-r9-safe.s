# Spill r9 to the stack after writing it.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r9, 0
stxdw [%r10-8], %r9
mov %r0, 0
exit
