# Signed checks on both sides: jsgt 60 then jslt 0.
# mem-size: 64
# want: accept
# max-insns: 6
ldxdw %r3, [%r1+0]
jsgt %r3, 60, out  # r3 <= 60
jslt %r3, 0, out   # r3 >= 0
add %r1, %r3
ldxb %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
