# The callee reads argument r3, which the caller never wrote.
# mem-size: 64
# want: reject uninit-reg
# insn: 2
call local f
exit
f:
mov %r0, %r3  # the caller never wrote r3
exit
