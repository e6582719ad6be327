# jgt32 bounds only the low 32 bits of an 8-byte value.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxdw %r3, [%r1+0]
jgt32 %r3, 60, out  # low 32 bits <= 60, upper 32 bits unknown
add %r1, %r3
ldxw %r0, [%r1+0]   # the upper half of the offset is unknown
exit
out:
mov %r0, 0
exit
