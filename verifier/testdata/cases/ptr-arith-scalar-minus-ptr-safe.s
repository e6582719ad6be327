# Subtract a pointer from a pointer into the same object.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r0, %r1
add %r0, 64
sub %r0, %r1  # pointer - pointer: a scalar (64)
exit
