# f calls g and g returns.
# mem-size: 64
# want: accept
# max-insns: 6
call local f
exit
f:
call local g
exit
g:
mov %r0, 0
exit
