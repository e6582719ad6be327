# XDP style: compare r1+16 with the end pointer r1+r2 before loading.
# mem-size: 64
# want: accept
# max-insns: 7
mov %r3, %r1
add %r3, %r2       # end of the memory
mov %r4, %r1
add %r4, 16
jgt %r4, %r3, out  # same object: allowed
ldxdw %r0, [%r1+8]
exit
out:
mov %r0, 0
exit
