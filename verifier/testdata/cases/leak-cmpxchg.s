# A compare-and-exchange may write the frame pointer into the memory.
# mem-size: 64
# want: reject pointer-leak
# insn: 1
mov %r0, 0
lock cmpxchg [%r1+0], %r10  # may write a pointer to memory
exit
