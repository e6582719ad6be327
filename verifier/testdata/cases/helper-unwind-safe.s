# A local call in the same place.
# mem-size: 64
# want: accept
# max-insns: 5
mov %r0, 0
call local f
exit
f:
mov %r0, 0
exit
