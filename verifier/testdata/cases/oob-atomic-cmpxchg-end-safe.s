# An 8-byte compare-and-exchange on the last 8 bytes.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r0, 0
lock cmpxchg [%r1+56], %r2  # bytes 56..63; r0 = old value
exit
