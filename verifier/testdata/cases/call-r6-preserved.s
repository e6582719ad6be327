# The caller's r6 (a pointer) survives the call even though the callee writes r6.
# mem-size: 64
# want: reject pointer-leak
# insn: 3
mov %r6, %r1  # r6 = memory pointer
call local f
mov %r0, %r6  # the caller's r6 is back: still the pointer
exit          # returns a pointer
f:
mov %r6, 5
mov %r0, 0
exit
