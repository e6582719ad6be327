# A loop of 1000 iterations reading the memory at counter & 63.
# mem-size: 64
# want: accept
# max-insns-range: 8003 16006
mov %r0, 0
mov %r3, 0
loop:
mov %r4, %r3
and %r4, 63
mov %r5, %r1
add %r5, %r4
ldxb %r6, [%r5+0]
add %r0, %r6
add %r3, 1
jlt %r3, 1000, loop
exit
