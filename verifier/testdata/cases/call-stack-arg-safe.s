# A callee reads the caller's slot through the pointer it was given.
# mem-size: 64
# want: accept
# max-insns: 7
stdw [%r10-8], 1
mov %r1, %r10
add %r1, -8          # r1 -> the caller's r10-8
call local f
exit
f:
ldxdw %r0, [%r1+0]
exit
