# A counter going 9, 7, 5, 3, 1, -1, ... never equals 0.
# mem-size: 64
# want: reject unbounded-loop
# insn: 4
mov %r0, 0
mov %r3, 9
loop:
add %r0, 1
sub %r3, 2
jne %r3, 0, loop  # odd values are never 0
exit
