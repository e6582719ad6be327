# A stack slot written on one path only, read after the merge.
# mem-size: 64
# want: reject uninit-stack
# insn: 3
ldxb %r3, [%r1+0]
jeq %r3, 0, +1
stdw [%r10-8], 1
ldxdw %r0, [%r10-8]  # unwritten on the jeq-taken path
exit
