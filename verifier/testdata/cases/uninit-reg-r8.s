# Shift by r8 before r8 was written.
# mem-size: 64
# want: reject uninit-reg
# insn: 1
mov %r0, 1
lsh %r0, %r8  # r8 uninitialised
exit
