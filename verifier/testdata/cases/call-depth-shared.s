# Calls to the same function from two callers are not recursion.
# mem-size: 64
# want: accept
# max-insns: 13
call local f
mov %r6, %r0
call local g
add %r0, %r6
exit
f:
call local h
exit
g:
call local h
exit
h:
mov %r0, 1
exit
