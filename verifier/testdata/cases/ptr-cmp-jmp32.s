# A 32-bit comparison of the memory pointer with 0.
# mem-size: 64
# want: reject pointer-compare
# insn: 1
mov %r0, 0
jne32 %r1, 0, +1  # pointer vs constant
mov %r0, 1
exit
