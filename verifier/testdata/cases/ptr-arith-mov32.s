# A 32-bit move of a pointer truncates it.
# mem-size: 64
# want: reject pointer-arith
# insn: 0
mov32 %r3, %r1  # 32-bit op on a pointer
ldxb %r0, [%r3+0]
exit
