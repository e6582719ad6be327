# A callee writes r0 before returning.
# mem-size: 64
# want: accept
# max-insns: 5
call local f
mov %r0, 0
exit
f:
mov %r0, 1
exit
