# scalar + pointer is a pointer; 10 + r1 loaded at +53.
# mem-size: 64
# want: accept
# max-insns: 4
mov %r3, 10
add %r3, %r1        # scalar + pointer: a pointer at offset 10
ldxb %r0, [%r3+53]  # 10+53 = 63
exit
