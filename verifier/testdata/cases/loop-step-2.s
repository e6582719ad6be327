# Count up to 100 in steps of 2.
# mem-size: 64
# want: accept
# max-insns-range: 153 306
mov %r0, 0
mov %r3, 0
loop:
add %r0, %r3
add %r3, 2
jlt %r3, 100, loop  # 50 iterations
exit
