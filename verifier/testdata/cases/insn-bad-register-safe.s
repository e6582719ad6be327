# A source register number 2.
# mem-size: 64
# want: accept
# max-insns: 2
mov %r0, %r2
exit
