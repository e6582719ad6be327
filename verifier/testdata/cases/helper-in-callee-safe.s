# The local function computes its result itself.
# mem-size: 64
# want: accept
# max-insns: 4
call local f
exit
f:
mov %r0, 2
exit
