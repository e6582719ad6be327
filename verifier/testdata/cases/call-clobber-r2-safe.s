# r2 is copied to r7 before the call and r7 is read after it.
# mem-size: 64
# want: accept
# max-insns: 6
mov %r7, %r2
call local f
mov %r0, %r7
exit
f:
mov %r0, 0
exit
