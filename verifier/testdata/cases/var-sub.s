# A pointer at 32 minus a value in {0, 32}, loaded at -1, can reach offset -1.
# mem-size: 64
# want: reject out-of-bounds
# insn: 4
ldxb %r3, [%r1+0]
add %r1, 32
and %r3, 32        # r3 is 0 or 32
sub %r1, %r3       # offset 0 or 32
ldxb %r0, [%r1-1]  # offset -1 or 31
exit
