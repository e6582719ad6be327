# An atomic add reads the stack slot, which was never written.
# mem-size: 64
# want: reject uninit-stack
# insn: 0
lock add [%r10-8], %r2  # reads r10-8..r10-1
mov %r0, 0
exit
