# Compare the memory pointer with a scalar in a register.
# mem-size: 64
# want: reject pointer-compare
# insn: 3
mov %r0, 0
mov %r3, %r2
add %r3, 8        # r3 = 72, a scalar
jgt %r1, %r3, +1  # pointer vs scalar
mov %r0, 1
exit
