# A spilled stack pointer (r10-16) reloaded and read at +9 reaches r10+0.
# mem-size: 64
# want: reject out-of-bounds
# insn: 5
mov %r3, %r10
add %r3, -16
stxdw [%r10-8], %r3
stdw [%r10-16], 5
ldxdw %r4, [%r10-8]  # r4 = r10-16
ldxdw %r0, [%r4+9]   # r10-7..r10+0
exit
