# A spilled stack pointer (r10-16) reloaded and read through.
# mem-size: 64
# want: accept
# max-insns: 7
mov %r3, %r10
add %r3, -16
stxdw [%r10-8], %r3
stdw [%r10-16], 5
ldxdw %r4, [%r10-8]  # r4 = r10-16
ldxdw %r0, [%r4+0]   # r10-16..r10-9
exit
