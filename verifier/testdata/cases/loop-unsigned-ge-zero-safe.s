# A count-down loop that continues while the counter is > 0.
# mem-size: 64
# want: accept
# max-insns-range: 33 66
mov %r0, 0
mov %r3, 10
loop:
add %r0, 1
sub %r3, 1
jgt %r3, 0, loop  # 10 iterations
exit
