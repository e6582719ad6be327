# A function with a 10-iteration loop, called twice.
# mem-size: 64
# want: accept
# max-insns-range: 71 142
call local f
mov %r6, %r0
call local f
add %r0, %r6
exit
f:
mov %r0, 0
mov %r3, 0
loop:
add %r0, 1
add %r3, 1
jlt %r3, 10, loop
exit
