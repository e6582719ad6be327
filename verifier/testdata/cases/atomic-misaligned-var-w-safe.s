# A 4-byte atomic at an offset masked with 60 (a multiple of 4).
# mem-size: 64
# want: accept
# max-insns: 6
ldxb %r3, [%r1+0]
and %r3, 60             # {0, 4, ..., 60}
add %r1, %r3
lock xchg32 [%r1+0], %r2
mov %r0, 0
exit
