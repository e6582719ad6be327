# jne32 48 pins a 4-byte value to 48: an 8-byte load at +8 ends at 64.
# mem-size: 64
# want: accept
# max-insns: 5
ldxw %r3, [%r1+0]
jne32 %r3, 48, out   # fall-through: r3 == 48
add %r1, %r3
ldxdw %r0, [%r1+8]   # 48+8+8 = 64
exit
out:
mov %r0, 0
exit
