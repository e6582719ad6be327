# A 1-byte ldxb that ends one byte past the end of the memory.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
ldxb %r0, [%r1+64]  # byte 64; the memory is bytes 0..63
exit
