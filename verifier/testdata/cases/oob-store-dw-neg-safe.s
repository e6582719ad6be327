# An 8-byte immediate store to the first 8 bytes.
# mem-size: 64
# want: accept
# max-insns: 3
stdw [%r1+0], 0  # bytes 0..7
mov %r0, 0
exit
