# A callee returns a byte masked with 127; the caller uses it as an offset.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
mov %r6, %r1
call local f
add %r6, %r0       # r0 in [0, 127]
ldxb %r0, [%r6+0]  # offset up to 127
exit
f:
ldxb %r0, [%r1+0]
and %r0, 127
exit
