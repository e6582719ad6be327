# A 4-byte atomic exchange on the first 4 bytes.
# mem-size: 64
# want: accept
# max-insns: 3
lock xchg32 [%r1+0], %r2  # bytes 0..3; r2 receives the old value
mov %r0, 0
exit
