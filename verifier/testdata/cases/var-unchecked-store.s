# A loaded 4-byte value used as a store offset with no check.
# mem-size: 64
# want: reject out-of-bounds
# insn: 2
ldxw %r3, [%r1+0]
add %r1, %r3       # r3 in [0, 2^32-1]
stb [%r1+0], 1     # offset up to 2^32-1
mov %r0, 0
exit
