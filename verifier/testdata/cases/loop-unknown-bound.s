# A loop up to a loaded 8-byte value.
# mem-size: 64
# want: reject unbounded-loop
# insn: 5
ldxdw %r4, [%r1+0]  # any 64-bit value
mov %r3, 0
mov %r0, 0
loop:
add %r0, 1
add %r3, 1
jlt %r3, %r4, loop  # the bound is not bounded
exit
