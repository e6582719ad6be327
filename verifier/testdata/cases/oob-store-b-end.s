# A 1-byte store that ends one byte past the end of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
stb [%r1+64], 1  # byte 64
mov %r0, 0
exit
