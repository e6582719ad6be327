# Load an 8-byte stack slot that was never written.
# mem-size: 64
# want: reject uninit-stack
# insn: 0
ldxdw %r0, [%r10-8]  # never written
exit
