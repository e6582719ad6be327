# A while loop counting a masked byte down to 0.
# mem-size: 64
# want: accept
# max-insns-range: 129 258
ldxb %r3, [%r1+0]
and %r3, 31
mov %r0, 0
loop:
jeq %r3, 0, done
sub %r3, 1
add %r0, 3
ja loop
done:
exit
