# The entry function calls another function.
# mem-size: 64
# want: accept
# max-insns: 7
mov %r0, 0
ldxb %r3, [%r1+0]
jeq %r3, 0, +1
call local f
exit
f:
mov %r0, 1
exit
