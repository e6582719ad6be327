# An atomic exchange writes a scalar into the memory.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r3, 7
lock xchg [%r1+0], %r3
mov %r0, %r3          # the old value: a scalar
exit
