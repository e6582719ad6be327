# Add r4 to r0 after writing r4.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r4, 1
mov %r0, 0
add %r0, %r4
exit
