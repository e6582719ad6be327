# Four instructions under a budget of 4.
# mem-size: 64
# budget: 4
# want: accept
# max-insns: 4
mov %r0, 1
add %r0, 1
add %r0, 1
exit
