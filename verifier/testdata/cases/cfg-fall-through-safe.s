# The same program with exit.
# mem-size: 64
# want: accept
# max-insns: 2
mov %r0, 0
exit
