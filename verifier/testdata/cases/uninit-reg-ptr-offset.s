# Add an unwritten register to the memory pointer.
# mem-size: 64
# want: reject uninit-reg
# insn: 0
add %r1, %r3  # r3 uninitialised
ldxb %r0, [%r1+0]
exit
