# A bounded loop whose exit edge runs off the end of the program.
# mem-size: 64
# want: reject fall-through
# insn: 2
mov %r0, 0
loop:
add %r0, 1
jlt %r0, 10, loop  # not taken: execution runs past the last slot
