# Add a pointer to a pointer.
# mem-size: 64
# want: reject pointer-arith
# insn: 1
mov %r3, %r1
add %r3, %r1       # pointer + pointer
ldxb %r0, [%r3+0]
exit
