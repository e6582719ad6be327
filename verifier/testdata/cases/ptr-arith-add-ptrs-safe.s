# Add a scalar (r2 = 64) to a pointer, then load at -1.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r3, %r1
add %r3, %r2       # pointer + scalar
ldxb %r0, [%r3-1]  # offset 63
exit
