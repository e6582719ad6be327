# r9 is written before a call and read after it.
# mem-size: 64
# want: accept
# max-insns: 6
mov %r9, 1
call local f
add %r0, %r9
exit
f:
mov %r0, 0
exit
