# A callee returns without writing r0.
# mem-size: 64
# want: reject uninit-reg
# insn: 3
call local f
mov %r0, 0
exit
f:
exit  # the callee's exit reads r0
