# Store r5 to memory after writing r5.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r5, 9
stxdw [%r1+0], %r5
mov %r0, 0
exit
