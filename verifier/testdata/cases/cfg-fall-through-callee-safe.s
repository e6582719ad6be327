# A local function that ends with exit.
# mem-size: 64
# want: accept
# max-insns: 4
call local f
exit
f:
mov %r0, 1
exit
