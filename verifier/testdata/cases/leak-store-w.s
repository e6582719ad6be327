# A 4-byte store of a pointer still leaks part of it.
# mem-size: 64
# want: reject pointer-leak
# insn: 0
stxw [%r1+0], %r1  # low half of a pointer
mov %r0, 0
exit
