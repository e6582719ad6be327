# r4 is written before a call and read after it.
# mem-size: 64
# want: reject uninit-reg
# insn: 2
mov %r4, 1
call local f
add %r0, %r4  # r4 is not preserved across a call
exit
f:
mov %r0, 0
exit
