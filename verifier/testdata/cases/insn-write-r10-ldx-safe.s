# A load into r3.
# mem-size: 64
# want: accept
# max-insns: 3
ldxdw %r3, [%r1+0]
mov %r0, 0
exit
