# A loaded 8-byte value used as an offset with no check.
# mem-size: 64
# want: reject out-of-bounds
# insn: 2
ldxdw %r3, [%r1+0]
add %r1, %r3       # any 64-bit value
ldxb %r0, [%r1+0]  # any offset
exit
