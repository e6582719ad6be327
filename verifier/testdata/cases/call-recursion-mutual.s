# f calls g and g calls f.
# mem-size: 64
# want: reject recursion
# insn: 4
call local f
exit
f:
call local g
exit
g:
call local f  # closes the cycle f -> g -> f
exit
