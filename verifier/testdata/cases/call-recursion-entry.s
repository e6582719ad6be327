# The entry function calls itself (call target slot 0).
# mem-size: 64
# want: reject recursion
# insn: 3
entry:
mov %r0, 0
ldxb %r3, [%r1+0]
jeq %r3, 0, +1
call local entry  # the entry calls itself
exit
