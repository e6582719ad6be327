# Four instructions under a budget of 3.
# mem-size: 64
# budget: 3
# want: reject budget
# insn: 3
mov %r0, 1
add %r0, 1
add %r0, 1
exit  # the 4th instruction
