# Load through a copy of the memory pointer.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r3, %r1
ldxb %r0, [%r3+0]
exit
