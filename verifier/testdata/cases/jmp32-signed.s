# jsgt32 60 on a 4-byte value lets 0x80000000.. (negative as s32) through.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxw %r3, [%r1+0]
jsgt32 %r3, 60, out  # low half <= 60 as s32: may be >= 0x80000000 unsigned
add %r1, %r3
ldxb %r0, [%r1+0]    # offset up to 2^32-1
exit
out:
mov %r0, 0
exit
