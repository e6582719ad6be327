# A 32-bit comparison of a loaded value with 0.
# mem-size: 64
# want: accept
# max-insns: 5
mov %r0, 0
ldxw %r3, [%r1+0]
jne32 %r3, 0, +1
mov %r0, 1
exit
