# Add the frame pointer to the memory pointer.
# mem-size: 64
# want: reject pointer-arith
# insn: 0
add %r1, %r10      # pointer + pointer
ldxb %r0, [%r1+0]
exit
