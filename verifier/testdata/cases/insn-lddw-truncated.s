# A program that ends in the first half of lddw.
# mem-size: 64
# want: reject invalid-insn
# insn: 0
# raw: 0x0000000100000018
#
# The assembler refuses this program, so its slots are given above.
# As text it would read:
#   lddw %r0, 0x1     # the second slot is missing
