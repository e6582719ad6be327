# A 4-byte ldxsw that ends one byte past the end of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
ldxsw %r0, [%r1+61]  # bytes 61..64; the memory is bytes 0..63
exit
