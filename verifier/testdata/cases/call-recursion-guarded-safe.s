# The same shape calling a different function.
# mem-size: 64
# want: accept
# max-insns: 10
mov %r1, 3
call local f
exit
f:
mov %r0, 0
jeq %r1, 0, done
sub %r1, 1
call local g
done:
exit
g:
mov %r0, 1
exit
