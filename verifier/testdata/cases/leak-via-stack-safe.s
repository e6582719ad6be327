# A scalar spilled, reloaded, then stored into the memory.
# mem-size: 64
# want: accept
# max-insns: 5
stxdw [%r10-8], %r2
ldxdw %r3, [%r10-8]  # 64
stxdw [%r1+0], %r3
mov %r0, 0
exit
