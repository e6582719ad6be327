# A callee reads at its own r10+0: above its frame, not the caller's stack.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
stdw [%r10-8], 1
call local f
exit
f:
ldxdw %r0, [%r10+0]  # the callee's frame is [r10-512, r10)
exit
