# An 8-byte fetch-add on the first 8 bytes returns the old value.
# mem-size: 64
# want: accept
# max-insns: 3
lock fetch add [%r1+0], %r2  # bytes 0..7; r2 = old value, a scalar
mov %r0, %r2
exit
