# A byte store on the taken edge of jle 63.
# mem-size: 64
# want: accept
# max-insns: 6
ldxb %r3, [%r1+0]
jle %r3, 63, ok    # taken: r3 <= 63
mov %r0, 0
exit
ok:
add %r1, %r3
stb [%r1+0], 1
mov %r0, 1
exit
