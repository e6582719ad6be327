# Load through r7 after copying the memory pointer into it.
# mem-size: 64
# want: accept
# max-insns: 3
mov %r7, %r1
ldxb %r0, [%r7+0]
exit
