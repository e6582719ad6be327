# An 8-byte store to the last 8 bytes of the memory.
# mem-size: 64
# want: accept
# max-insns: 3
stxdw [%r1+56], %r2  # bytes 56..63
mov %r0, 0
exit
