# ja to itself.
# mem-size: 64
# want: reject unbounded-loop
# insn: 1
mov %r0, 0
spin:
ja spin  # loops forever
