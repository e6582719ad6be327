# A plain byte load instead.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r0, 0
ldxb %r0, [%r1+0]
exit
