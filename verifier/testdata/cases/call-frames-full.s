# Three frames each use the whole 512 bytes of their own stack frame.
# mem-size: 64
# want: accept
# max-insns: 11
stdw [%r10-512], 1
call local f
ldxdw %r0, [%r10-512]
exit
f:
stdw [%r10-512], 2   # the callee's own frame
call local g
ldxdw %r0, [%r10-512]
exit
g:
stdw [%r10-512], 3
ldxdw %r0, [%r10-512]
exit
