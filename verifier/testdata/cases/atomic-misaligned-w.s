# A 4-byte atomic add at memory offset 2.
# mem-size: 64
# want: reject misaligned
# insn: 0
lock add32 [%r1+2], %r2  # 2 is not a multiple of 4
mov %r0, 0
exit
