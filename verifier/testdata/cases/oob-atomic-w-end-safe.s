# An aligned 4-byte atomic add on the last 4 bytes.
# mem-size: 64
# want: accept
# max-insns: 3
lock add32 [%r1+60], %r2  # bytes 60..63
mov %r0, 0
exit
