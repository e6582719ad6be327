# A value loaded from the memory, masked, used as an offset.
# mem-size: 64
# want: accept
# max-insns: 5
ldxdw %r3, [%r1+0]
and %r3, 63
add %r3, %r1       # scalar + pointer
ldxb %r0, [%r3+0]
exit
