# A function that calls another function.
# mem-size: 64
# want: accept
# max-insns: 7
call local f
exit
f:
mov %r0, 0
call local g
exit
g:
mov %r0, 1
exit
