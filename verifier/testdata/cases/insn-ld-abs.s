# A legacy packet load (ld abs), which NAAM does not support.
# mem-size: 64
# want: reject invalid-insn
# insn: 1
# raw: 0x00000000000000b7
# raw: 0x0000000000000030
# raw: 0x0000000000000095
#
# The assembler refuses this program, so its slots are given above.
# As text it would read:
#   mov %r0, 0
#   (opcode 0x30)     # ld abs, byte, offset 0
#   exit
