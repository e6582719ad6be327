# A 1-byte load from a 1-byte memory.
# mem-size: 1
# want: accept
# max-insns: 2
ldxb %r0, [%r1+0]  # the only byte
exit
