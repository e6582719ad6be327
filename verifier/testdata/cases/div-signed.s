# sdiv of INT64_MIN by -1 and smod by 0.
# mem-size: 64
# want: accept
# max-insns: 5
lddw %r0, 0x8000000000000000
sdiv %r0, -1  # INT64_MIN
mov %r3, 0
smod %r0, %r3  # unchanged
exit
