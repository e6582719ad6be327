# A callee returns a byte masked with 63; the caller uses it as an offset.
# mem-size: 64
# want: accept
# max-insns: 8
mov %r6, %r1
call local f
add %r6, %r0       # r0 in [0, 63]
ldxb %r0, [%r6+0]
exit
f:
ldxb %r0, [%r1+0]
and %r0, 63
exit
