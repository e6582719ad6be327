# A byte store on the taken edge of jle 64 can hit offset 64.
# mem-size: 64
# want: reject out-of-bounds
# insn: 5
ldxb %r3, [%r1+0]
jle %r3, 64, ok    # taken: r3 <= 64
mov %r0, 0
exit
ok:
add %r1, %r3
stb [%r1+0], 1     # offset 64 possible
mov %r0, 1
exit
