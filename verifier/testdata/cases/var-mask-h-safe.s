# A 2-byte load at an offset masked with 62 ends at byte 63 at most.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
and %r3, 62        # r3 up to 62
add %r1, %r3
ldxh %r0, [%r1+0]
exit
