# A pointer moved by 8 is still a pointer.
# mem-size: 64
# want: reject pointer-leak
# insn: 2
mov %r0, %r1
add %r0, 8
exit  # r0 = r1+8
