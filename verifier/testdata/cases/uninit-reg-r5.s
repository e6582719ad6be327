# Store r5 to memory before r5 was written.
# mem-size: 64
# want: reject uninit-reg
# insn: 0
stxdw [%r1+0], %r5  # r5 uninitialised
mov %r0, 0
exit
