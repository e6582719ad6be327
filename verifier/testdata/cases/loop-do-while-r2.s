# A do-while loop over every byte of the memory, bounded by r2.
# mem-size: 64
# want: accept
# max-insns-range: 387 774
mov %r0, 0
mov %r3, 0
loop:
mov %r4, %r1
add %r4, %r3       # r3 in [0, 63] at the loop head
ldxb %r5, [%r4+0]
add %r0, %r5
add %r3, 1
jlt %r3, %r2, loop
exit
