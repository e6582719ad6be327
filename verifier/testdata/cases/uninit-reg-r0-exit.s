# exit with r0 never written.
# mem-size: 64
# want: reject uninit-reg
# insn: 0
exit  # r0 is read by exit
