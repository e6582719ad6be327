# The callee's r6 (a pointer) does not leak into the caller's r6.
# mem-size: 64
# want: accept
# max-insns: 7
mov %r6, 5
call local f
mov %r0, %r6  # 5 again
exit
f:
mov %r6, %r1
mov %r0, 0
exit
