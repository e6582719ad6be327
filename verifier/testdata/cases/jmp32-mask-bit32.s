# A mask that keeps bit 32: jgt32 then bounds only the low half.
# mem-size: 64
# want: reject out-of-bounds
# insn: 6
ldxdw %r3, [%r1+0]
lddw %r4, 0x1000000ff
and %r3, %r4        # bit 32 may be set
jgt32 %r3, 60, out
add %r1, %r3
ldxw %r0, [%r1+0]   # bit 32 of the offset may be set
exit
out:
mov %r0, 0
exit
