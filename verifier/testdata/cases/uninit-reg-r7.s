# Load through r7 before r7 was written.
# mem-size: 64
# want: reject uninit-reg
# insn: 0
ldxb %r0, [%r7+0]  # r7 uninitialised (not merely not a pointer)
exit
