# Nested 100 x 100 loops (30,303 instructions) under a budget of 20,000.
# mem-size: 64
# budget: 20000
# want: reject budget
# insn: 7
mov %r0, 0
mov %r3, 0
outer:
mov %r4, 0
inner:
add %r0, 1
add %r4, 1
jlt %r4, 100, inner  # 300 per outer iteration: fine alone
add %r3, 1
jlt %r3, 100, outer  # the nest exceeds the budget
exit
