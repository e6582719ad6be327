# A helper call inside a local function.
# mem-size: 64
# want: reject unknown-helper
# insn: 2
call local f
exit
f:
call 2  # no helper 2
exit
