# r1 is an argument register: reading it after a call is reading an unwritten register.
# mem-size: 64
# want: reject uninit-reg
# insn: 1
call local f
ldxb %r0, [%r1+0]  # r1 is not preserved across a call
exit
f:
mov %r0, 0
exit
