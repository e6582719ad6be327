# Moving a copy of the frame pointer with add.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r3, %r10
add %r3, -8
mov %r0, 0
exit
