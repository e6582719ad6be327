# Add r4 to r0 before r4 was written.
# mem-size: 64
# want: reject uninit-reg
# insn: 1
mov %r0, 0
add %r0, %r4  # r4 uninitialised
exit
