# Search the memory for a zero byte: a loop with two exits.
# mem-size: 64
# want: accept
# max-insns-range: 451 902
mov %r0, 0
loop:
jge %r0, 64, done
mov %r3, %r1
add %r3, %r0      # r0 < 64
ldxb %r4, [%r3+0]
jeq %r4, 0, done
add %r0, 1
ja loop
done:
exit
