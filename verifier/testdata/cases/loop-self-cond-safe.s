# The same conditional jump to the next instruction.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r0, 0
ldxb %r3, [%r1+0]
jeq %r3, 0, +0
exit
