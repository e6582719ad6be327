# A 32-bit counter and a JMP32 loop test.
# mem-size: 64
# want: accept
# max-insns-range: 153 306
mov %r0, 0
mov32 %r3, 0
loop:
add %r0, 1
add32 %r3, 1
jlt32 %r3, 50, loop  # 50 iterations
exit
