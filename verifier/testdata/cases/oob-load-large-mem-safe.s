# An 8-byte load of the last 8 bytes of a 4096-byte memory.
# mem-size: 4096
# want: accept
# max-insns: 2
ldxdw %r0, [%r1+4088]  # bytes 4088..4095
exit
