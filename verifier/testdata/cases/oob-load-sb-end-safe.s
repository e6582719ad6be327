# A 1-byte ldxsb of the last byte of the memory.
# mem-size: 64
# want: accept
# max-insns: 2
ldxsb %r0, [%r1+63]  # byte 63
exit
