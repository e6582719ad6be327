# A 4-byte store of a scalar.
# mem-size: 64
# want: accept
# max-insns: 3
stxw [%r1+0], %r2
mov %r0, 0
exit
