# A 64-bit constant that happens to equal a VM address is still a number.
# mem-size: 64
# want: reject not-a-pointer
# insn: 2
lddw %r3, 0x300000000  # the interpreter's address of the memory
ldxb %r0, [%r3+0]      # a scalar (lddw takes slots 0 and 1)
exit
