# An offset that is 0 or 56 after a merge, then an 8-byte load.
# mem-size: 64
# want: accept
# max-insns: 7
ldxb %r3, [%r1+0]
mov %r4, 0
jeq %r3, 0, +1
mov %r4, 56         # r4 is 0 or 56 after the merge
add %r1, %r4
ldxdw %r0, [%r1+0]
exit
