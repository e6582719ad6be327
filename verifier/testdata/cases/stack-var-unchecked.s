# A stack store at r10 minus an unchecked 32-bit value.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxw %r3, [%r1+0]
mov %r4, %r10
sub %r4, %r3        # r3 in [0, 2^32-1]
stxdw [%r4-8], %r2  # up to 2^32 bytes below the frame
mov %r0, 0
exit
