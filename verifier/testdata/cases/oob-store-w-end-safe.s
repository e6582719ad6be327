# A 4-byte store to the last 4 bytes of the memory.
# mem-size: 64
# want: accept
# max-insns: 3
stxw [%r1+60], %r2  # bytes 60..63
mov %r0, 0
exit
