# Keep the memory pointer in r6 across the call.
# mem-size: 64
# want: accept
# max-insns: 6
mov %r6, %r1       # r6-r9 survive calls
call local f
ldxb %r0, [%r6+0]
exit
f:
mov %r0, 0
exit
