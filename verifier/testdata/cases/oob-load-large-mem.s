# An 8-byte load one byte past the end of a 4096-byte memory.
# mem-size: 4096
# want: reject out-of-bounds
# insn: 0
ldxdw %r0, [%r1+4089]  # bytes 4089..4096
exit
