# r6 is written before a call and spilled after it.
# mem-size: 64
# want: accept
# max-insns: 7
mov %r6, 2
call local f
stxdw [%r10-8], %r6
mov %r0, 0
exit
f:
mov %r0, 0
exit
