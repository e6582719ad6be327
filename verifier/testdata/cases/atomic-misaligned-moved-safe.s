# The memory pointer moved by 3: a 4-byte atomic at +1 is at offset 4.
# mem-size: 64
# want: accept
# max-insns: 4
add %r1, 3
lock add32 [%r1+1], %r2  # offset 4
mov %r0, 0
exit
