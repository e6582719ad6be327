# A mask of 0xff clears the upper half: jgt32 60 bounds the value.
# mem-size: 64
# want: accept
# max-insns: 7
ldxdw %r3, [%r1+0]
lddw %r4, 0xff
and %r3, %r4        # r3 in [0, 255]
jgt32 %r3, 60, out
add %r1, %r3
ldxw %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
