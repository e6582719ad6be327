# Subtract -1 from the memory pointer instead.
# mem-size: 64
# want: accept
# max-insns: 3
sub %r1, -1
ldxb %r0, [%r1+0]
exit
