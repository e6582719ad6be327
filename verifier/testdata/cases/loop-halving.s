# A counter halved each way around, tested against zero at the bottom:
# bounded by analysis (log2 of its range at the head), as in a binary search.
# mem-size: 64
# want: accept
# max-insns: 39
mov %r0, 0
mov %r2, 2048
loop:
add %r0, 1
rsh %r2, 1
jne %r2, 0, loop  # 12 times around: 2048, 1024, ..., 1
exit
