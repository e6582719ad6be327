# Align a stack pointer with and.
# mem-size: 64
# want: reject pointer-arith
# insn: 1
mov %r3, %r10
and %r3, -16      # and on a pointer
stdw [%r3-16], 0
mov %r0, 0
exit
