# Count from 0 to 100.
# mem-size: 64
# want: accept
# max-insns-range: 303 606
mov %r0, 0
mov %r3, 0
loop:
add %r0, %r3
add %r3, 1
jlt %r3, 100, loop  # 100 iterations of 3 instructions
exit
