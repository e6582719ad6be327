# A 2-byte store that ends one byte past the end of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
sth [%r1+63], 1  # bytes 63..64
mov %r0, 0
exit
