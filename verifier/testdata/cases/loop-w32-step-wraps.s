# 32-bit steps that add up to 2^32+1 per way around are +1 modulo 2^32:
# the loop runs 1,000 times, so a step this large is no step to bound by.
# mem-size: 64
# want: reject unbounded-loop
# insn: 6
mov32 %r3, 0
mov %r0, 0
head:
add %r0, 1
add32 %r3, 0x7fffffff
add32 %r3, 0x7fffffff
add32 %r3, 3
jlt %r3, 1000, head
exit
