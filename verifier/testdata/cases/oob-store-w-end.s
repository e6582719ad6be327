# A 4-byte store that ends one byte past the end of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
stxw [%r1+61], %r2  # bytes 61..64
mov %r0, 0
exit
