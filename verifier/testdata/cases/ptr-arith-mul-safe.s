# Add to the memory pointer instead.
# mem-size: 64
# want: accept
# max-insns: 3
add %r1, 2
ldxb %r0, [%r1+0]
exit
