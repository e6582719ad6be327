# r8 is written before a call and read after it.
# mem-size: 64
# want: accept
# max-insns: 6
mov %r8, 5
call local f
mov %r0, %r8
exit
f:
mov %r0, 0
exit
