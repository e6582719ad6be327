# Add a scalar to the memory pointer.
# mem-size: 64
# want: accept
# max-insns: 3
add %r1, %r2       # pointer + 64
ldxb %r0, [%r1-64]
exit
