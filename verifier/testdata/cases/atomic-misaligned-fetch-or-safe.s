# An 8-byte fetch-or at memory offset 16.
# mem-size: 64
# want: accept
# max-insns: 3
lock fetch or [%r1+16], %r2
mov %r0, %r2
exit
