# cmpxchg after r0 is written.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r0, 0
lock cmpxchg [%r1+0], %r2
exit
