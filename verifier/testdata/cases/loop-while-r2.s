# A while loop over every byte of the memory, bounded by r2.
# mem-size: 64
# want: accept
# max-insns-range: 452 904
mov %r0, 0
mov %r3, 0
loop:
jge %r3, %r2, done  # r3 < 64 below
mov %r4, %r1
add %r4, %r3
ldxb %r5, [%r4+0]
add %r0, %r5
add %r3, 1
ja loop
done:
exit
