# Division and modulo by the immediate 0.
# mem-size: 64
# want: accept
# max-insns: 6
ldxdw %r0, [%r1+0]
div %r0, 0   # 0
ldxdw %r3, [%r1+8]
mod %r3, 0   # unchanged
add %r0, %r3
exit
