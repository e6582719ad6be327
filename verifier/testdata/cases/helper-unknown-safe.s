# A local call instead of a helper call.
# mem-size: 64
# want: accept
# max-insns: 4
call local f
exit
f:
mov %r0, 0
exit
