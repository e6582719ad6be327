# A callee reads its own slot r10-8, which only the caller's frame has written.
# mem-size: 64
# want: reject uninit-stack
# insn: 3
stdw [%r10-8], 1     # the caller's frame
call local f
exit
f:
ldxdw %r0, [%r10-8]  # the callee's own frame: never written
exit
