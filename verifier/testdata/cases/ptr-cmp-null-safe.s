# Compare a loaded byte with 0.
# mem-size: 64
# want: accept
# max-insns: 5
mov %r0, 0
ldxb %r3, [%r1+0]
jeq %r3, 0, +1
mov %r0, 1
exit
