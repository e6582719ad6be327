# Shift by r8 after writing it.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r8, 3
mov %r0, 1
lsh %r0, %r8
exit
