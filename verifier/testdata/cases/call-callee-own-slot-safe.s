# A callee writes its own slot r10-8 before reading it.
# mem-size: 64
# want: accept
# max-insns: 6
stdw [%r10-8], 1     # the caller's frame
call local f
exit
f:
stdw [%r10-8], 2     # the callee's frame
ldxdw %r0, [%r10-8]
exit
