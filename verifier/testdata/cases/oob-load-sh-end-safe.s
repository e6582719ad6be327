# A 2-byte ldxsh of the last 2 bytes of the memory.
# mem-size: 64
# want: accept
# max-insns: 2
ldxsh %r0, [%r1+62]  # bytes 62..63
exit
