# Copy r3 to r0 before r3 was written.
# mem-size: 64
# want: reject uninit-reg
# insn: 0
mov %r0, %r3  # r3 uninitialised
exit
