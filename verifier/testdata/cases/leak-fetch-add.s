# An atomic add of a pointer puts the pointer value into the memory.
# mem-size: 64
# want: reject pointer-leak
# insn: 1
mov %r3, %r10
lock fetch add [%r1+0], %r3  # adds a pointer into memory
mov %r0, 0
exit
