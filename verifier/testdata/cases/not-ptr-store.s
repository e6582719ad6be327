# Store through a register holding a number.
# mem-size: 64
# want: reject not-a-pointer
# insn: 1
mov %r3, 4096
stb [%r3+0], 1  # r3 is a number
mov %r0, 0
exit
