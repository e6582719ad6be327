# A loop tests a counter that its body never changes.
# mem-size: 64
# want: reject unbounded-loop
# insn: 3
mov %r0, 0
mov %r3, 0
loop:
add %r0, 1
jlt %r3, 10, loop  # r3 stays 0
exit
