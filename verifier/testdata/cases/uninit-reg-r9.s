# Spill r9 to the stack before r9 was written.
# mem-size: 64
# want: reject uninit-reg
# insn: 0
stxdw [%r10-8], %r9  # r9 uninitialised
mov %r0, 0
exit
