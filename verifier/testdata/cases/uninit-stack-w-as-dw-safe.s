# A 4-byte slot read back as 4 bytes.
# mem-size: 64
# want: accept
# max-insns: 3
stxw [%r10-4], %r2
ldxw %r0, [%r10-4]
exit
