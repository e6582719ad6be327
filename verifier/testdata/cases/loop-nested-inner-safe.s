# Nested 10 x 10 loops.
# mem-size: 64
# want: accept
# max-insns-range: 333 666
mov %r0, 0
mov %r3, 0
outer:
mov %r4, 0
inner:
add %r0, 1
add %r4, 1
jlt %r4, 10, inner
add %r3, 1
jlt %r3, 10, outer
exit
