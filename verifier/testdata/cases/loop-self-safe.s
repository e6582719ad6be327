# ja to the next instruction is not a loop.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r0, 0
ja +0
exit
