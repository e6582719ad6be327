# A signed lower bound and a signed upper bound (jslt 0 out, jsgt 63 out).
# mem-size: 64
# want: accept
# max-insns: 6
ldxdw %r3, [%r1+0]
jslt %r3, 0, out   # r3 >= 0
jsgt %r3, 63, out  # r3 <= 63
add %r1, %r3
ldxb %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
