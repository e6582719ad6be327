# The same loop under a budget of 1,000,000.
# mem-size: 64
# budget: 1000000
# want: accept
# max-insns-range: 300003 600006
mov %r0, 0
mov %r3, 0
loop:
add %r0, 1
add %r3, 1
jlt %r3, 100000, loop
exit
