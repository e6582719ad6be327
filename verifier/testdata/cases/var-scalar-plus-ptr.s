# scalar + pointer is a pointer; 10 + r1 loaded at +54 overruns.
# mem-size: 64
# want: reject out-of-bounds
# insn: 2
mov %r3, 10
add %r3, %r1        # scalar + pointer: a pointer at offset 10
ldxb %r0, [%r3+54]  # 10+54 = 64
exit
