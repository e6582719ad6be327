# Count down from 100 to 0.
# mem-size: 64
# want: accept
# max-insns-range: 303 606
mov %r0, 0
mov %r3, 100
loop:
add %r0, 1
sub %r3, 1
jgt %r3, 0, loop  # from a known start
exit
