# The merged pointer (offset 0 or 8) loaded at +48.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
jeq %r3, 0, +1
add %r1, 8           # offset 8 on this path, 0 on the other
ldxdw %r0, [%r1+48]  # 8+48+8 = 64
exit
