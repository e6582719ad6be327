# Division by a register that may be 0.
# mem-size: 64
# want: accept
# max-insns: 5
ldxdw %r0, [%r1+0]
ldxdw %r3, [%r1+8]  # may be 0
div %r0, %r3
mod %r0, %r3
exit
