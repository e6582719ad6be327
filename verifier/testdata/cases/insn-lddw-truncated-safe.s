# A complete lddw followed by exit.
# mem-size: 64
# want: accept
# max-insns: 2
lddw %r0, 0x1
exit
