# Store through a copy of the frame pointer.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r3, %r10
stb [%r3-1], 1
mov %r0, 0
exit
