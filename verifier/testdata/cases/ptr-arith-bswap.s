# Byte-swap the memory pointer.
# mem-size: 64
# want: reject pointer-arith
# insn: 0
bswap64 %r1  # not allowed on a pointer
ldxb %r0, [%r1+0]
exit
