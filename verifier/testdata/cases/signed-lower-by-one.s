# Signed checks that let -1 through: jsgt 60 then jslt -1.
# mem-size: 64
# want: reject out-of-bounds
# insn: 4
ldxdw %r3, [%r1+0]
jsgt %r3, 60, out  # r3 <= 60
jslt %r3, -1, out  # r3 >= -1: -1 gets through
add %r1, %r3
ldxb %r0, [%r1+0]  # offset -1 possible
exit
out:
mov %r0, 0
exit
