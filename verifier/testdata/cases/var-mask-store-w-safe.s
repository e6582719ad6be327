# A 4-byte store at an offset masked with 60.
# mem-size: 64
# want: accept
# max-insns: 6
ldxb %r3, [%r1+0]
and %r3, 60         # r3 up to 60
add %r1, %r3
stxw [%r1+0], %r2
mov %r0, 0
exit
