# The same check written unsigned (jgt 60) bounds both sides.
# mem-size: 64
# want: accept
# max-insns: 5
ldxdw %r3, [%r1+0]
jgt %r3, 60, out   # fall-through: 0 <= r3 <= 60
add %r1, %r3
ldxb %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
