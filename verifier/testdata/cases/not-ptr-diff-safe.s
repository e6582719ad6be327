# A pointer minus a scalar is a pointer.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r3, %r1
sub %r3, 0         # still a pointer
ldxb %r0, [%r3+0]
exit
