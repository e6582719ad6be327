# The same byte load is fine once the memory has one byte.
# mem-size: 1
# want: accept
# max-insns: 2
ldxb %r0, [%r1+0]  # mem-size 1
exit
