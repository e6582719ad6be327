# Any load from an empty (0-byte) memory is out of bounds.
# mem-size: 0
# want: reject out-of-bounds
# insn: 0
ldxb %r0, [%r1+0]  # mem-size 0
exit
