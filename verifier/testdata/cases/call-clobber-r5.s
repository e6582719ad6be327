# r5 is written before a call and spilled after it.
# mem-size: 64
# want: reject uninit-reg
# insn: 2
mov %r5, 2
call local f
stxdw [%r10-8], %r5  # r5 is not preserved across a call
mov %r0, 0
exit
f:
mov %r0, 0
exit
