# A signed check (jsgt 60) leaves the offset unbounded below.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxdw %r3, [%r1+0]
jsgt %r3, 60, out  # fall-through: r3 <= 60 signed, may be negative
add %r1, %r3
ldxb %r0, [%r1+0]  # offset may be negative (huge unsigned)
exit
out:
mov %r0, 0
exit
