# Store a scalar (r2) into the memory.
# mem-size: 64
# want: accept
# max-insns: 3
stxdw [%r1+8], %r2
mov %r0, 0
exit
