# A stack store at r10 minus a value masked with 504.
# mem-size: 64
# want: accept
# max-insns: 7
ldxw %r3, [%r1+0]
and %r3, 504        # r3 in {0, 8, ..., 504}
mov %r4, %r10
sub %r4, %r3
stxdw [%r4-8], %r2  # r10-512 .. r10-1
mov %r0, 0
exit
