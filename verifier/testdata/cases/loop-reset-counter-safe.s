# The counter is set once, before the loop.
# mem-size: 64
# want: accept
# max-insns-range: 33 66
mov %r0, 0
mov %r3, 0
loop:
add %r3, 1
add %r0, 1
jlt %r3, 10, loop
exit
