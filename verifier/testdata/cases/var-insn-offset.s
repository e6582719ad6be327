# A masked offset plus a constant instruction offset ends one byte past the end.
# mem-size: 64
# want: reject out-of-bounds
# insn: 3
ldxb %r3, [%r1+0]
and %r3, 31
add %r1, %r3
ldxdw %r0, [%r1+26]  # 31+26+8 = 65
exit
