# mov to r9.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r9, 0
mov %r0, 0
exit
