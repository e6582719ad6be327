# An 8-byte ldxdw of the last 8 bytes of the memory.
# mem-size: 64
# want: accept
# max-insns: 2
ldxdw %r0, [%r1+56]  # bytes 56..63
exit
