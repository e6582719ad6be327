# Compare the memory pointer with another pointer into the memory.
# mem-size: 64
# want: accept
# max-insns: 6
mov %r0, 0
mov %r3, %r1
add %r3, 8        # r3 = r1+8, a pointer
jgt %r1, %r3, +1  # same object
mov %r0, 1
exit
