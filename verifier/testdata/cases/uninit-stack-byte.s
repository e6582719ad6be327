# One byte written, two bytes read.
# mem-size: 64
# want: reject uninit-stack
# insn: 1
stb [%r10-1], 1
ldxh %r0, [%r10-2]  # r10-2 never written
exit
