# A million iterations under a budget of ten million.
# mem-size: 64
# budget: 10000000
# want: accept
# max-insns-range: 3000003 6000006
mov %r0, 0
mov %r3, 0
loop:
add %r0, %r3
add %r3, 1
jlt %r3, 1000000, loop
exit
