# A 4-byte atomic at an offset masked with 58 (may be 2 mod 4).
# mem-size: 64
# want: reject misaligned
# insn: 3
ldxb %r3, [%r1+0]
and %r3, 58             # bit 1 may be set; at most 58, so in bounds
add %r1, %r3
lock xchg32 [%r1+0], %r2  # offset 2 (mod 4) is possible
mov %r0, 0
exit
