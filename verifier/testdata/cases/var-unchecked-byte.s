# A loaded byte (0..255) used as an offset with no check.
# mem-size: 64
# want: reject out-of-bounds
# insn: 2
ldxb %r3, [%r1+0]
add %r1, %r3       # r3 in [0, 255], unchecked
ldxb %r0, [%r1+0]  # offset up to 255
exit
