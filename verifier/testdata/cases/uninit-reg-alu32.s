# A 32-bit add to r0 reads r0 before it was written.
# mem-size: 64
# want: reject uninit-reg
# insn: 0
add32 %r0, 1  # reads r0
exit
