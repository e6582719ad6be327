# A conditional jump to the next slot.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r0, 0
jeq %r2, 0, +0    # slot 2
exit
