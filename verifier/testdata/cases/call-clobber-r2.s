# r2 is read after a call.
# mem-size: 64
# want: reject uninit-reg
# insn: 1
call local f
mov %r0, %r2  # r2 is not preserved across a call
exit
f:
mov %r0, 0
exit
