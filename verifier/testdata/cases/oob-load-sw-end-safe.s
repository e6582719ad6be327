# A 4-byte ldxsw of the last 4 bytes of the memory.
# mem-size: 64
# want: accept
# max-insns: 2
ldxsw %r0, [%r1+60]  # bytes 60..63
exit
