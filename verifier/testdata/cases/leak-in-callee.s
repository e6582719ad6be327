# A callee stores the stack pointer it was given into the memory.
# mem-size: 64
# want: reject pointer-leak
# insn: 3
mov %r2, %r10
call local f
exit
f:
stxdw [%r1+0], %r2  # r2 is the caller's frame pointer
mov %r0, 0
exit
