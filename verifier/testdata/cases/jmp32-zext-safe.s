# mov32 zero-extends, so jgt32 60 bounds the whole register.
# mem-size: 64
# want: accept
# max-insns: 6
ldxdw %r3, [%r1+0]
mov32 %r3, %r3      # zero-extend: upper half known zero
jgt32 %r3, 60, out
add %r1, %r3
ldxw %r0, [%r1+0]
exit
out:
mov %r0, 0
exit
