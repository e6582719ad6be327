# A 2-byte ldxsh that ends one byte past the end of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
ldxsh %r0, [%r1+63]  # bytes 63..64; the memory is bytes 0..63
exit
