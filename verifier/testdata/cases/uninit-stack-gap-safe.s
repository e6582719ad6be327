# Two 4-byte stores fill the slot, then 8 bytes are read.
# mem-size: 64
# want: accept
# max-insns: 4
stw [%r10-8], 1      # r10-8..r10-5
stw [%r10-4], 2      # r10-4..r10-1
ldxdw %r0, [%r10-8]
exit
