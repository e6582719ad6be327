# The same store offset masked to 0..63.
# mem-size: 64
# want: accept
# max-insns: 6
ldxw %r3, [%r1+0]
and %r3, 63
add %r1, %r3
stb [%r1+0], 1
mov %r0, 0
exit
