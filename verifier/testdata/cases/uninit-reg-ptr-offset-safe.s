# Add a written register to the memory pointer.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r3, 5
add %r1, %r3
ldxb %r0, [%r1+0]
exit
