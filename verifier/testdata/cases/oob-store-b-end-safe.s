# A 1-byte store to the last byte of the memory.
# mem-size: 64
# want: accept
# max-insns: 3
stb [%r1+63], 1  # byte 63
mov %r0, 0
exit
