# ja to the last slot of the program.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r0, 0
ja +0             # slot 2
exit
