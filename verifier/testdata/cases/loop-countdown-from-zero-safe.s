# The same count-down, skipped when the byte is 0.
# mem-size: 64
# want: accept
# max-insns-range: 769 1538
ldxb %r3, [%r1+0]
mov %r0, 0
jeq %r3, 0, done   # r3 in [1, 255] in the loop
loop:
add %r0, 1
sub %r3, 1
jgt %r3, 0, loop   # at most 255 iterations
done:
exit
