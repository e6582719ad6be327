# A local function that is never called.
# mem-size: 64
# want: reject unreachable
# insn: 2
mov %r0, 0
exit
f:
mov %r0, 1  # never called
exit
