# A callee writes all 8 bytes of the caller's slot; the caller reads them.
# mem-size: 64
# want: accept
# max-insns: 8
mov %r1, %r10
add %r1, -8
call local f
ldxdw %r0, [%r10-8]  # written by the callee through r1
exit
f:
stdw [%r1+0], 7
mov %r0, 0
exit
