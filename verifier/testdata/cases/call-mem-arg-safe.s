# A callee loads the last 8 bytes of the memory through the caller's r1.
# mem-size: 64
# want: accept
# max-insns: 4
call local f
exit
f:
ldxdw %r0, [%r1+56]
exit
