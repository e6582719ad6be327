# Copy r3 to r0 after writing r3.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r3, 7
mov %r0, %r3
exit
