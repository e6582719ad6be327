# Every atomic operation, 32 and 64 bit, aligned, on memory and stack.
# mem-size: 64
# want: accept
# max-insns: 20
stdw [%r10-8], 0
mov %r3, 1
lock add [%r1+0], %r3
lock or [%r1+8], %r3
lock and [%r1+16], %r3
lock xor [%r1+24], %r3
lock add32 [%r1+32], %r3
lock or32 [%r1+36], %r3
lock and32 [%r1+40], %r3
lock xor32 [%r1+44], %r3
lock fetch add [%r10-8], %r3
lock fetch or32 [%r1+48], %r3
lock fetch and [%r1+56], %r3
lock fetch xor32 [%r10-4], %r3
lock xchg [%r1+0], %r3
lock xchg32 [%r1+60], %r3
mov %r0, 0
lock cmpxchg [%r10-8], %r3
lock cmpxchg32 [%r1+52], %r3
exit
