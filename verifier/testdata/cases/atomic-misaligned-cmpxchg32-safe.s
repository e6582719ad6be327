# A 4-byte compare-and-exchange at memory offset 8.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r0, 0
lock cmpxchg32 [%r1+8], %r2
exit
