# Return a scalar computed the same way.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r0, %r2
add %r0, -8
exit
