# A sign-extended byte checked unsigned (jgt 60): negatives are huge and go out.
# mem-size: 64
# want: accept
# max-insns: 5
ldxsb %r3, [%r1+0]  # r3 in [-128, 127]
jgt %r3, 60, out    # fall-through: r3 in [0, 60]
add %r1, %r3
ldxw %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
