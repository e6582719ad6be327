# A 2-byte store to the last 2 bytes of the memory.
# mem-size: 64
# want: accept
# max-insns: 3
sth [%r1+62], 1  # bytes 62..63
mov %r0, 0
exit
