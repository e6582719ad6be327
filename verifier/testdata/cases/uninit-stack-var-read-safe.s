# Both slots the variable-offset read may touch were written.
# mem-size: 64
# want: accept
# max-insns: 9
stdw [%r10-16], 1
stdw [%r10-8], 2
ldxb %r3, [%r1+0]
and %r3, 8          # r3 is 0 or 8
mov %r4, %r10
add %r4, -16
add %r4, %r3        # r10-16 or r10-8
ldxdw %r0, [%r4+0]
exit
