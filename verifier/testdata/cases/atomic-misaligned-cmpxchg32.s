# A 4-byte compare-and-exchange at memory offset 6.
# mem-size: 64
# want: reject misaligned
# insn: 1
mov %r0, 0
lock cmpxchg32 [%r1+6], %r2  # 6 is not a multiple of 4
exit
