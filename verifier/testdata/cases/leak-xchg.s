# An atomic exchange writes a pointer into the memory.
# mem-size: 64
# want: reject pointer-leak
# insn: 1
mov %r3, %r1
lock xchg [%r1+0], %r3  # stores the pointer in r3
mov %r0, 0
exit
