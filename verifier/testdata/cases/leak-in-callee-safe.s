# A callee stores the scalar it was given into the memory.
# mem-size: 64
# want: accept
# max-insns: 6
mov %r2, 0
call local f
exit
f:
stxdw [%r1+0], %r2
mov %r0, 0
exit
