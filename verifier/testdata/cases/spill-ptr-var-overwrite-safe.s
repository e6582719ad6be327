# The same unknown-offset store over a scalar spill leaves readable data.
# mem-size: 8
# want: accept
# max-insns: 8
mov %r2, 0x41
stxdw [%r10-16], %r2
ldxb %r3, [%r1]
and %r3, 7
add %r3, %r10
stb [%r3-16], 0
ldxb %r0, [%r10-16]
exit
