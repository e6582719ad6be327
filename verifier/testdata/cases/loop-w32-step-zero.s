# Two 32-bit steps of -2^31 are 0 modulo 2^32: the loop never ends.
# mem-size: 64
# want: reject unbounded-loop
# insn: 5
mov32 %r3, 5
mov %r0, 0
head:
add %r0, 1
add32 %r3, -0x80000000
add32 %r3, -0x80000000
jeq %r3, 5, head
exit
