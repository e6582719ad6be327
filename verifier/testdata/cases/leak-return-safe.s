# Return the memory size in r0.
# mem-size: 64
# want: accept
# max-insns: 2
mov %r0, %r2
exit
