# An 8-byte atomic on the stack at r10-16 plus 0 or 4.
# mem-size: 64
# want: reject misaligned
# insn: 7
stdw [%r10-16], 0
stdw [%r10-8], 0
ldxb %r3, [%r1+0]
and %r3, 4            # 0 or 4
mov %r4, %r10
add %r4, -16
add %r4, %r3
lock add [%r4+0], %r2  # r10-12 possible
mov %r0, 0
exit
