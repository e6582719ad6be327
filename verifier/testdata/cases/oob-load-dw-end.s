# An 8-byte ldxdw that ends one byte past the end of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
ldxdw %r0, [%r1+57]  # bytes 57..64; the memory is bytes 0..63
exit
