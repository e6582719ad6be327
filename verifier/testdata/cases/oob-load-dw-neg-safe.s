# A moved pointer goes back exactly to the start of the memory.
# mem-size: 64
# want: accept
# max-insns: 3
add %r1, 16
ldxdw %r0, [%r1-16]  # 16-16 = 0
exit
