# A callee given a pointer to the caller's top slot reads one byte past it.
# mem-size: 64
# want: reject out-of-bounds
# insn: 5
stdw [%r10-8], 1
mov %r1, %r10
add %r1, -8          # r1 -> the caller's r10-8
call local f
exit
f:
ldxdw %r0, [%r1+1]   # the caller's r10-7..r10+0
exit
