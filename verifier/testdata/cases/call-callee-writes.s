# A callee writes 4 of the 8 bytes of the caller's slot; the caller reads 8.
# mem-size: 64
# want: reject uninit-stack
# insn: 3
mov %r1, %r10
add %r1, -8
call local f
ldxdw %r0, [%r10-8]  # the callee wrote only r10-8..r10-5
exit
f:
stw [%r1+0], 7
mov %r0, 0
exit
