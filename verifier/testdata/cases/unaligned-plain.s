# Plain loads and stores need no alignment, on memory and on the stack.
# mem-size: 64
# want: accept
# max-insns: 8
ldxdw %r3, [%r1+3]
stxw [%r1+9], %r3
sth [%r1+62], 7
stxdw [%r10-13], %r3
ldxw %r0, [%r10-11]
ldxh %r4, [%r1+1]
add %r0, %r4
exit
