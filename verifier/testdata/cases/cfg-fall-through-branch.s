# One branch ends with exit, the other runs off the end.
# mem-size: 64
# want: reject fall-through
# insn: 4
ldxb %r3, [%r1+0]
mov %r0, 0
jeq %r3, 0, +1
exit
mov %r0, 1  # execution runs past the last slot
