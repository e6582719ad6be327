# The same nested loops under a budget of 60,606.
# mem-size: 64
# budget: 60606
# want: accept
# max-insns-range: 30303 60606
mov %r0, 0
mov %r3, 0
outer:
mov %r4, 0
inner:
add %r0, 1
add %r4, 1
jlt %r4, 100, inner
add %r3, 1
jlt %r3, 100, outer
exit
