# Compare the memory size with a constant.
# mem-size: 64
# want: accept
mov %r0, 0
jlt %r2, 4096, +1  # scalar vs constant (always taken: r2 = 64)
mov %r0, 1
exit
