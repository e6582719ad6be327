# The counter is reset at the top of every iteration.
# mem-size: 64
# want: reject unbounded-loop
# insn: 4
mov %r0, 0
loop:
mov %r3, 0
add %r3, 1
add %r0, 1
jlt %r3, 10, loop  # r3 is always 1 here
exit
