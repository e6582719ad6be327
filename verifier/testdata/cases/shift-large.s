# Shifts by counts of 64 and more (masked by the ISA).
# mem-size: 64
# want: accept
# max-insns: 8
ldxdw %r0, [%r1+0]
lsh %r0, 64
mov %r3, 200
rsh %r0, %r3
arsh32 %r0, 40
ldxb %r4, [%r1+8]
lsh %r0, %r4     # any count 0..255
exit
