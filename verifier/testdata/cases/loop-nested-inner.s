# The inner loop of a nested pair never advances its counter.
# mem-size: 64
# want: reject unbounded-loop
# insn: 4
mov %r0, 0
mov %r3, 0
outer:
mov %r4, 0
inner:
add %r0, 1
jlt %r4, 10, inner  # r4 stays 0
add %r3, 1
jlt %r3, 10, outer
exit
