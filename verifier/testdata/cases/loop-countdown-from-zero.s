# A do-while count-down from a loaded byte wraps around when the byte is 0.
# mem-size: 64
# want: reject unbounded-loop
# insn: 4
ldxb %r3, [%r1+0]  # may be 0
mov %r0, 0
loop:
add %r0, 1
sub %r3, 1         # 0 - 1 = 2^64-1
jgt %r3, 0, loop   # no useful bound: up to 2^64 iterations
exit
