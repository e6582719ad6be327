# A callee loads past the end of the memory through the caller's r1.
# mem-size: 64
# want: reject out-of-bounds
# insn: 2
call local f
exit
f:
ldxdw %r0, [%r1+57]  # r1 is the caller's memory pointer
exit
