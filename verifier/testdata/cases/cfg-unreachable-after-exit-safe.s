# A branch instead of the first exit reaches the code.
# mem-size: 64
# want: accept
# max-insns: 5
ldxb %r3, [%r1+0]
mov %r0, 0
jne %r3, 0, +1
mov %r0, 1
exit
