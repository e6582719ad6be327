# A 4-byte and a 2-byte store leave a 2-byte hole in the slot.
# mem-size: 64
# want: reject uninit-stack
# insn: 2
stw [%r10-8], 1      # r10-8..r10-5
sth [%r10-4], 2      # r10-4..r10-3
ldxdw %r0, [%r10-8]  # r10-2..r10-1 never written
exit
