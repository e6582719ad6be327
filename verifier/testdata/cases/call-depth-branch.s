# The ninth frame is reached on one branch only.
# mem-size: 64
# want: reject call-depth
# insn: 16
call local f1
exit
f1:
call local f2
exit
f2:
call local f3
exit
f3:
call local f4
exit
f4:
call local f5
exit
f5:
call local f6
exit
f6:
call local f7
exit
f7:
mov %r0, 0
jeq %r2, 0, +1   # r2 (64) is passed down unchanged
call local f8  # the 9th frame, on one path
exit
f8:
mov %r0, 1
exit
