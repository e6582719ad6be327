# A loop up to a loaded value masked with 255.
# mem-size: 64
# want: accept
# max-insns-range: 770 1540
ldxdw %r4, [%r1+0]
and %r4, 255        # r4 in [0, 255]
mov %r3, 0
mov %r0, 0
loop:
add %r0, 1
add %r3, 1
jlt %r3, %r4, loop  # at most 255 iterations
exit
