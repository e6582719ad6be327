# An 8-byte atomic on the stack at r10-16 plus 0 or 8.
# mem-size: 64
# want: accept
# max-insns: 10
stdw [%r10-16], 0
stdw [%r10-8], 0
ldxb %r3, [%r1+0]
and %r3, 8            # 0 or 8
mov %r4, %r10
add %r4, -16
add %r4, %r3
lock add [%r4+0], %r2
mov %r0, 0
exit
