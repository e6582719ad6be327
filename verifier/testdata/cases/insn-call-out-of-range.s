# A local call whose target is outside the program.
# mem-size: 64
# want: reject invalid-insn
# insn: 0
# raw: 0x0000000a00001085
# raw: 0x0000000000000095
#
# The assembler refuses this program, so its slots are given above.
# As text it would read:
#   call local +10    # slot 11: the program has slots 0..1
#   exit
