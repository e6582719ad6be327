# A copy of r10 moved down by 8 stores exactly the top slot.
# mem-size: 64
# want: accept
# max-insns: 5
mov %r3, %r10
add %r3, -8
stdw [%r3+0], 0  # r10-8..r10-1
mov %r0, 0
exit
