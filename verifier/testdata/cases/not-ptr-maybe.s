# A register that is the memory pointer on one path and 0 on the other.
# mem-size: 64
# want: reject not-a-pointer
# insn: 4
ldxb %r3, [%r1+0]
mov %r4, %r1
jeq %r3, 0, +1
mov %r4, 0
ldxb %r0, [%r4+0]  # may be 0
exit
