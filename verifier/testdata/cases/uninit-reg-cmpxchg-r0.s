# cmpxchg compares with r0, so r0 must be written first.
# mem-size: 64
# want: reject uninit-reg
# insn: 0
lock cmpxchg [%r1+0], %r2  # reads r0
exit
