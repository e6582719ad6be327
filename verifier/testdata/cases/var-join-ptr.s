# A pointer moved by 8 on one branch only; after the merge its offset is 0 or 8.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxb %r3, [%r1+0]
jeq %r3, 0, +1
add %r1, 8           # offset 8 on this path, 0 on the other
ldxdw %r0, [%r1+56]  # 8+56+8 = 72
exit
