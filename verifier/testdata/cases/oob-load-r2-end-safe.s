# r1 + r2 - 1 is the last byte of the memory.
# mem-size: 64
# want: accept
# max-insns: 3
add %r1, %r2       # r2 = mem-size = 64
ldxb %r0, [%r1-1]  # offset 63
exit
