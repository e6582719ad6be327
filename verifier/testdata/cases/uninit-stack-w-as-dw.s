# A 4-byte slot read as 8 bytes starting 4 bytes below it.
# mem-size: 64
# want: reject uninit-stack
# insn: 1
stxw [%r10-4], %r2   # writes r10-4..r10-1
ldxdw %r0, [%r10-8]  # r10-8..r10-5 never written
exit
