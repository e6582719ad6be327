# An 8-byte atomic at an offset masked with 52 (may be 4 mod 8).
# mem-size: 64
# want: reject misaligned
# insn: 3
ldxb %r3, [%r1+0]
and %r3, 52             # {0, 4, 16, 20, 32, 36, 48, 52}: in bounds, not all 8-aligned
add %r1, %r3
lock add [%r1+0], %r2   # offset 4, 20, 36 or 52 is possible
mov %r0, 0
exit
