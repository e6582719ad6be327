# Branch on r6 before r6 was written.
# mem-size: 64
# want: reject uninit-reg
# insn: 1
mov %r0, 0
jeq %r6, 0, +1  # r6 uninitialised
mov %r0, 1
exit
