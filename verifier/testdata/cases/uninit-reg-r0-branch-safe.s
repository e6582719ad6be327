# r0 is written before the branch and again on one path.
# mem-size: 64
# want: accept
# max-insns: 5
mov %r0, 0
ldxb %r3, [%r1+0]
jeq %r3, 0, done
mov %r0, 1
done:
exit
