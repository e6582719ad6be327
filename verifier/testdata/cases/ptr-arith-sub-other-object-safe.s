# Subtract pointers into the same object.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r0, %r1
sub %r0, %r1   # same object: a scalar (0)
exit
