# All 8 bytes written, then 8 bytes read.
# mem-size: 64
# want: accept
# max-insns: 3
stdw [%r10-8], 0
ldxdw %r0, [%r10-8]
exit
