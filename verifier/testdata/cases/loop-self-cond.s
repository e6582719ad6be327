# A conditional jump to itself on a value that never changes.
# mem-size: 64
# want: reject unbounded-loop
# insn: 2
mov %r0, 0
ldxb %r3, [%r1+0]
spin:
jeq %r3, 0, spin  # loops forever when the byte is 0
exit
