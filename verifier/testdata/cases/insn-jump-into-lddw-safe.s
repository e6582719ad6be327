# A conditional jump over a whole lddw.
# mem-size: 64
# want: accept
mov %r0, 0
jne %r2, 0, done  # over the whole lddw, to slot 4
lddw %r0, 0x1
done:
exit
