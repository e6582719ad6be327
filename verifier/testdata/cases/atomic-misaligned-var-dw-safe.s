# An 8-byte atomic at an offset masked with 56 (a multiple of 8).
# mem-size: 64
# want: accept
# max-insns: 6
ldxb %r3, [%r1+0]
and %r3, 56             # {0, 8, ..., 56}
add %r1, %r3
lock add [%r1+0], %r2
mov %r0, 0
exit
