# Index masked with 15 then scaled by 8: up to 120, an 8-byte load overruns.
# mem-size: 64
# want: reject out-of-bounds
# insn: 4
ldxb %r3, [%r1+0]
and %r3, 15
lsh %r3, 3          # r3 in {0, 8, ..., 120}
add %r1, %r3
ldxdw %r0, [%r1+0]  # 120+8 > 64
exit
