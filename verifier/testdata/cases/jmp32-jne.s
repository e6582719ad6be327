# jne32 49 pins a 4-byte value to 49: an 8-byte load at +8 overruns.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxw %r3, [%r1+0]
jne32 %r3, 49, out   # fall-through: r3 == 49
add %r1, %r3
ldxdw %r0, [%r1+8]   # 49+8+8 = 65
exit
out:
mov %r0, 0
exit
