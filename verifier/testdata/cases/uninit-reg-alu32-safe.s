# A 32-bit mov writes r0 without reading it.
# mem-size: 64
# want: accept
# max-insns: 2
mov32 %r0, 1
exit
