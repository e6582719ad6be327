# Compare two stack pointers.
# mem-size: 64
# want: accept
# max-insns: 6
mov %r0, 0
mov %r3, %r10
add %r3, -8
jeq %r3, %r10, +1  # same object
mov %r0, 1
exit
