# 32-bit division and modulo by 0.
# mem-size: 64
# want: accept
# max-insns: 7
ldxw %r0, [%r1+0]
mov %r3, 0
div32 %r0, %r3
ldxw %r4, [%r1+4]
mod32 %r4, 0
add32 %r0, %r4
exit
