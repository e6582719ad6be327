# Load through a register holding 0.
# mem-size: 64
# want: reject not-a-pointer
# insn: 1
mov %r3, 0
ldxb %r0, [%r3+0]  # r3 is a number
exit
