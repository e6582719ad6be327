# call 1: no helpers exist in raw mode.
# mem-size: 64
# want: reject unknown-helper
# insn: 0
call 1  # no helper 1
exit
