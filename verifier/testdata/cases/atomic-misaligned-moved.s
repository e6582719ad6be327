# The memory pointer moved by 3: a 4-byte atomic at +0 is at offset 3.
# mem-size: 64
# want: reject misaligned
# insn: 1
add %r1, 3
lock add32 [%r1+0], %r2  # offset 3
mov %r0, 0
exit
