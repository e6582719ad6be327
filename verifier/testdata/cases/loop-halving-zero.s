# Halving a counter that may already be zero at the loop head never ends it:
# zero stays zero.
# mem-size: 64
# want: reject unbounded-loop
# insn: 4
ldxb %r2, [%r1]
mov %r0, 0
loop:
add %r0, 1
rsh %r2, 1
jge %r2, 0, loop  # always true
exit
