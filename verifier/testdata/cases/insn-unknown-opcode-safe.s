# A known opcode in the same place.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r0, 0
add %r0, 1
exit
