# r0 is a pointer on one path and a scalar on the other.
# mem-size: 64
# want: reject pointer-leak
# insn: 4
mov %r0, 0
ldxb %r3, [%r1+0]
jeq %r3, 0, +1
mov %r0, %r1
exit  # r0 may be the pointer
