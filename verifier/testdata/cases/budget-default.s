# A 100,000-iteration loop exceeds the default budget of 100,000.
# mem-size: 64
# want: reject budget
# insn: 4
mov %r0, 0
mov %r3, 0
loop:
add %r0, 1
add %r3, 1
jlt %r3, 100000, loop  # 300,003 instructions
exit
