# A pointer moved forward then back by a register, one byte too far.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
add %r1, 8
mov %r3, 9
sub %r1, %r3         # offset -1
ldxb %r0, [%r1+0]    # offset -1
exit
