# A local call to a function inside the program.
# mem-size: 64
# want: accept
# max-insns: 4
call local f
exit
f:
mov %r0, 0
exit
