# Count from -10 to 10 with a signed comparison.
# mem-size: 64
# want: accept
# max-insns-range: 63 126
mov %r0, 0
mov %r3, -10
loop:
add %r0, 1
add %r3, 1
jslt %r3, 10, loop  # 20 iterations
exit
