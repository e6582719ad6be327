# Index masked with 7 then scaled by 8: up to 56.
# mem-size: 64
# want: accept
# max-insns: 6
ldxb %r3, [%r1+0]
and %r3, 7
lsh %r3, 3          # r3 in {0, 8, ..., 56}
add %r1, %r3
ldxdw %r0, [%r1+0]
exit
