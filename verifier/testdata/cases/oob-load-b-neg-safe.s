# A byte load of the first byte of the memory.
# mem-size: 64
# want: accept
# max-insns: 2
ldxb %r0, [%r1+0]  # offset 0
exit
