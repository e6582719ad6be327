# One way around halves the counter, another adds one: neither rule bounds
# the loop, so it is refused (it runs a million times on zero memory).
# mem-size: 8
# want: reject unbounded-loop
# insn: 6
ldxb %r7, [%r1+0]
mov %r6, 1
head:
jgt %r6, 1000000, out
jeq %r7, 0, inc
jlt %r6, 2, inc
rsh %r6, 1
ja head
inc:
add %r6, 1
ja head
out:
mov %r0, 0
exit
