# Count up to 100 with jne, as compilers emit it.
# mem-size: 64
# want: accept
# max-insns-range: 303 606
mov %r0, 0
mov %r3, 0
loop:
add %r0, %r3
add %r3, 1
jne %r3, 100, loop  # 1, 2, ..., 100: stops exactly at 100
exit
