# r3 is written before a call and read after it.
# mem-size: 64
# want: reject uninit-reg
# insn: 2
mov %r3, 5
call local f
mov %r0, %r3  # r3 is not preserved across a call
exit
f:
mov %r0, 0
exit
