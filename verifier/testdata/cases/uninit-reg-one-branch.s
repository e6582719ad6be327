# r9 is written on one path only and read after the merge.
# mem-size: 64
# want: reject uninit-reg
# insn: 3
ldxb %r3, [%r1+0]
jeq %r3, 0, +1
mov %r9, 1
mov %r0, %r9  # r9 uninitialised on the jeq-taken path
exit
