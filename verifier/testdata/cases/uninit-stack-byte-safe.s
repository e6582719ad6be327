# One byte written, that byte read.
# mem-size: 64
# want: accept
# max-insns: 3
stb [%r10-1], 1
ldxb %r0, [%r10-1]
exit
