# Spin at most 100 times.
# mem-size: 64
# want: accept
# max-insns-range: 401 802
mov %r0, 0
spin:
ldxb %r3, [%r1+0]
add %r0, 1
jge %r0, 100, done
jeq %r3, 0, spin
done:
exit
