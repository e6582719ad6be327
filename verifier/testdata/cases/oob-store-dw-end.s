# An 8-byte store that ends one byte past the end of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
stxdw [%r1+57], %r2  # bytes 57..64
mov %r0, 0
exit
