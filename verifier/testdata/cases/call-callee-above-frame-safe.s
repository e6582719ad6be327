# A callee reads the caller's stack through the caller's r10 passed in r1.
# mem-size: 64
# want: accept
# max-insns: 6
stdw [%r10-8], 1
mov %r1, %r10        # the caller's frame pointer, as an argument
call local f
exit
f:
ldxdw %r0, [%r1-8]   # the caller's r10-8
exit
