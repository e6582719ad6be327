# jsgt32 60 and jslt32 0 on a 4-byte value bound it to 0..60.
# mem-size: 64
# want: accept
# max-insns: 6
ldxw %r3, [%r1+0]
jsgt32 %r3, 60, out  # s32 <= 60
jslt32 %r3, 0, out   # s32 >= 0
add %r1, %r3
ldxb %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
