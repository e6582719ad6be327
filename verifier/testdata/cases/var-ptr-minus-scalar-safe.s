# A pointer moved forward then back by a register (pointer - scalar).
# mem-size: 64
# want: accept
# max-insns: 5
add %r1, 8
mov %r3, 8
sub %r1, %r3         # offset 0
ldxb %r0, [%r1+0]
exit
