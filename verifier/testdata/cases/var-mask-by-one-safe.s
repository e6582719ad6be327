# A byte offset masked with 63 stays inside 64 bytes.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
and %r3, 63        # r3 in [0, 63]
add %r1, %r3
ldxb %r0, [%r1+0]
exit
