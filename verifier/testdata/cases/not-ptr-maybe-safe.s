# A register that is a memory pointer on both paths.
# mem-size: 64
# want: accept
# max-insns: 6
ldxb %r3, [%r1+0]
mov %r4, %r1
jeq %r3, 0, +1
mov %r4, %r1
ldxb %r0, [%r4+0]
exit
