# A stack store at r10 - (0..511) - 2 reaches one byte below the frame.
# mem-size: 64
# want: reject out-of-bounds
# insn: 4
ldxdw %r3, [%r1+0]
and %r3, 511       # r3 in [0, 511]
mov %r4, %r10
sub %r4, %r3       # r10-511 .. r10
stb [%r4-2], 0     # down to r10-513
mov %r0, 0
exit
