# A 64-bit constant added to the memory pointer.
# mem-size: 64
# want: accept
# max-insns: 4
lddw %r3, 0x10
add %r3, %r1
ldxb %r0, [%r3+0]
exit
