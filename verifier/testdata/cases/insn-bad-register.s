# A source register number 11.
# mem-size: 64
# want: reject invalid-insn
# insn: 0
# raw: 0x000000000000b0bf
# raw: 0x0000000000000095
#
# The assembler refuses this program, so its slots are given above.
# As text it would read:
#   mov %r0, %r11
#   exit
