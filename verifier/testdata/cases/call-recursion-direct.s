# A function that calls itself.
# mem-size: 64
# want: reject recursion
# insn: 3
call local f
exit
f:
mov %r0, 0
call local f  # f calls f
exit
