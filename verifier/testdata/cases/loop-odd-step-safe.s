# The same counter tested with jsgt 0 stops after 5 iterations.
# mem-size: 64
# want: accept
# max-insns-range: 18 36
mov %r0, 0
mov %r3, 9
loop:
add %r0, 1
sub %r3, 2
jsgt %r3, 0, loop  # 9, 7, 5, 3, 1: stops at -1
exit
