# The same loop over a 4096-byte memory (28,676 instructions).
# mem-size: 4096
# want: accept
# max-insns-range: 28676 57352
mov %r0, 0
mov %r3, 0
loop:
jge %r3, %r2, done
mov %r4, %r1
add %r4, %r3
ldxb %r5, [%r4+0]
add %r0, %r5
add %r3, 1
ja loop
done:
exit
