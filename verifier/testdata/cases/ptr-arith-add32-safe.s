# The 64-bit add on the memory pointer.
# mem-size: 64
# want: accept
# max-insns: 3
add %r1, 8
ldxb %r0, [%r1+0]
exit
