# Move a stack pointer with add.
# mem-size: 64
# want: accept
# max-insns: 5
mov %r3, %r10
add %r3, -16
stdw [%r3+0], 0
mov %r0, 0
exit
