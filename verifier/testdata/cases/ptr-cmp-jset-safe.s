# Test bits of a loaded byte with jset.
# mem-size: 64
# want: accept
# max-insns: 5
mov %r0, 0
ldxb %r3, [%r1+0]
jset %r3, 7, +1
mov %r0, 1
exit
