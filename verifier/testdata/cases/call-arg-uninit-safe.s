# The caller writes r3 before the call.
# mem-size: 64
# want: accept
# max-insns: 5
mov %r3, 4
call local f
exit
f:
mov %r0, %r3
exit
