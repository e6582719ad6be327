# An 8-byte load at an offset masked with 56.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
and %r3, 56         # r3 in {0, 8, ..., 56}
add %r1, %r3
ldxdw %r0, [%r1+0]
exit
