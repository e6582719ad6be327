# An atomic fetch-add whose source is r2.
# mem-size: 64
# want: accept
# max-insns: 3
lock fetch add [%r1+0], %r2
mov %r0, 0
exit
