# A byte offset masked with 64 can be 64: one past the end.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxb %r3, [%r1+0]
and %r3, 64        # r3 is 0 or 64
add %r1, %r3
ldxb %r0, [%r1+0]  # offset 64 is possible
exit
