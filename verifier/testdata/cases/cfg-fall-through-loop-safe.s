# A bounded loop followed by exit.
# mem-size: 64
# want: accept
# max-insns-range: 22 44
mov %r0, 0
loop:
add %r0, 1
jlt %r0, 10, loop
exit
