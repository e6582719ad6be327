# An 8-byte fetch-or at memory offset 12.
# mem-size: 64
# want: reject misaligned
# insn: 0
lock fetch or [%r1+12], %r2  # 12 is not a multiple of 8
mov %r0, %r2
exit
