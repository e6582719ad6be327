# The same offset masked to 0..63 first.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
and %r3, 63
add %r1, %r3
ldxb %r0, [%r1+0]
exit
