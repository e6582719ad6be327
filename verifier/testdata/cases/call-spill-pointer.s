# Spill the memory pointer, call, reload it and load through it.
# mem-size: 64
# want: accept
# max-insns: 7
stxdw [%r10-8], %r1  # spill: survives the call in the caller's frame
call local f
ldxdw %r1, [%r10-8]  # the pointer again
ldxb %r0, [%r1+63]
exit
f:
mov %r0, 0
exit
