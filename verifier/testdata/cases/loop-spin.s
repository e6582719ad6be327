# Spin until a byte of the memory becomes non-zero.
# mem-size: 64
# want: reject unbounded-loop
# insn: 2
mov %r0, 0
spin:
ldxb %r3, [%r1+0]
jeq %r3, 0, spin  # nothing else writes the memory
exit
