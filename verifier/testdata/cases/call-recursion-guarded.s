# Recursion is rejected even when a counter bounds its depth.
# mem-size: 64
# want: reject recursion
# insn: 6
mov %r1, 3
call local f
exit
f:
mov %r0, 0
jeq %r1, 0, done
sub %r1, 1
call local f  # recursion, bounded or not
done:
exit
