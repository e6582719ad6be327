# Load through r1, the memory pointer.
# mem-size: 64
# want: accept
# max-insns: 2
ldxb %r0, [%r1+0]
exit
