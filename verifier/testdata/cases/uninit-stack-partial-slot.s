# Only 4 bytes of an 8-byte slot written, then 8 bytes read.
# mem-size: 64
# want: reject uninit-stack
# insn: 1
stw [%r10-8], 0      # writes r10-8..r10-5
ldxdw %r0, [%r10-8]  # r10-4..r10-1 never written
exit
