# A byte store one byte below the 512-byte stack frame.
# mem-size: 64
# want: reject out-of-bounds
# insn: 0
stb [%r10-513], 0  # one below r10-512
mov %r0, 0
exit
