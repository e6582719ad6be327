# A loop over every byte of a 20,000-byte memory (140,004 instructions).
# mem-size: 20000
# want: reject budget
# insn: 8
mov %r0, 0
mov %r3, 0
loop:
jge %r3, %r2, done
mov %r4, %r1
add %r4, %r3
ldxb %r5, [%r4+0]
add %r0, %r5
add %r3, 1
ja loop  # 20,000 iterations of 7
done:
exit
