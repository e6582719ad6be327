# An lddw jumped over by every path.
# mem-size: 64
# want: reject unreachable
# insn: 3
ldxb %r3, [%r1+0]
mov %r0, 0
ja +2
lddw %r0, 0x1  # no path reaches this
exit
