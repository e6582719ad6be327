# The difference of two pointers into the memory is a scalar.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r0, %r1
add %r0, 8
sub %r0, %r1  # pointer - pointer: a scalar
exit
