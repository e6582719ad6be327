# A conditional jump into the second slot of lddw.
# mem-size: 64
# want: reject invalid-insn
# insn: 1
# raw: 0x00000000000000b7
# raw: 0x0000000000010255
# raw: 0x0000000100000018
# raw: 0x0000000000000000
# raw: 0x0000000000000095
#
# The assembler refuses this program, so its slots are given above.
# As text it would read:
#   mov %r0, 0
#   jne %r2, 0, +1    # slot 3: the second half of the lddw in slots 2-3
#   lddw %r0, 0x1
#   exit
