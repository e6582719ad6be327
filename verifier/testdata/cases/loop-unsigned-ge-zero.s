# A count-down loop that continues while the counter is >= 0 unsigned: always.
# mem-size: 64
# want: reject unbounded-loop
# insn: 4
mov %r0, 0
mov %r3, 10
loop:
add %r0, 1
sub %r3, 1
jge %r3, 0, loop  # unsigned >= 0 is always true
exit
