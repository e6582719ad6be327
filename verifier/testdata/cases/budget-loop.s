# A 100-iteration loop (303 instructions) under a budget of 302.
# mem-size: 64
# budget: 302
# want: reject budget
# insn: 5
mov %r0, 0
mov %r3, 0
loop:
add %r0, %r3
add %r3, 1
jlt %r3, 100, loop
exit  # the 303rd instruction executed: past the budget
