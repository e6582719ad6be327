# An 8-byte atomic add at memory offset 4.
# mem-size: 64
# want: reject misaligned
# insn: 0
lock add [%r1+4], %r2  # 4 is not a multiple of 8
mov %r0, 0
exit
