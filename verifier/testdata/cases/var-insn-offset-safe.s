# A masked offset plus a constant instruction offset ends exactly at the end.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
and %r3, 31
add %r1, %r3
ldxdw %r0, [%r1+25]  # 31+25+8 = 64
exit
