# A 4-byte store at an offset masked with 61 can end at byte 64.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxb %r3, [%r1+0]
and %r3, 61         # r3 up to 61
add %r1, %r3
stxw [%r1+0], %r2   # 61+4 > 64
mov %r0, 0
exit
