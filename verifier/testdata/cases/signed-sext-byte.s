# A sign-extended byte (-128..127) checked with jsgt 60 may be negative.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxsb %r3, [%r1+0]  # r3 in [-128, 127]
jsgt %r3, 60, out   # fall-through: r3 in [-128, 60]
add %r1, %r3
ldxw %r0, [%r1+0]   # offset may be negative
exit
out:
mov %r0, 0
exit
