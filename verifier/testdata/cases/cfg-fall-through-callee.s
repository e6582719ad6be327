# A local function that runs off the end of the program.
# mem-size: 64
# want: reject fall-through
# insn: 2
call local f
exit
f:
mov %r0, 1  # the callee has no exit
