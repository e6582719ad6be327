# r0 is written on one path only; exit after the merge.
# mem-size: 64
# want: reject uninit-reg
# insn: 3
ldxb %r3, [%r1+0]
jeq %r3, 0, done
mov %r0, 1
done:
exit  # r0 uninitialised on the jeq-taken path
