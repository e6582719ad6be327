# A copy of r10 moved down by 8, then stored to at +1, reaches r10+0.
# mem-size: 64
# want: reject out-of-bounds
# insn: 2
mov %r3, %r10
add %r3, -8
stdw [%r3+1], 0  # r10-7..r10+0
mov %r0, 0
exit
