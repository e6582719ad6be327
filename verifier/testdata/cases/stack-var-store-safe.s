# A stack store at r10 - (0..511) - 1 stays inside the frame.
# mem-size: 64
# want: accept
# max-insns: 7
ldxdw %r3, [%r1+0]
and %r3, 511       # r3 in [0, 511]
mov %r4, %r10
sub %r4, %r3
stb [%r4-1], 0     # r10-512 .. r10-1
mov %r0, 0
exit
