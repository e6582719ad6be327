# An offset that is 0 or 57 after a merge, then an 8-byte load.
# mem-size: 64
# want: reject out-of-bounds
# insn: 5
ldxb %r3, [%r1+0]
mov %r4, 0
jeq %r3, 0, +1
mov %r4, 57         # r4 is 0 or 57 after the merge
add %r1, %r4
ldxdw %r0, [%r1+0]  # 57+8 > 64
exit
