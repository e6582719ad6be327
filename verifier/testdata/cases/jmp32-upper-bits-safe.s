# After a 4-byte load the upper half is zero, so jgt32 60 bounds the whole value.
# mem-size: 64
# want: accept
# max-insns: 5
ldxw %r3, [%r1+0]   # upper 32 bits known zero
jgt32 %r3, 60, out  # safe only with the 32-bit refinement
add %r1, %r3
ldxw %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
