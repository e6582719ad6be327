# Opcode 0xff is not an eBPF instruction.
# mem-size: 64
# want: reject invalid-insn
# insn: 1
# raw: 0x00000000000000b7
# raw: 0x00000000000000ff
# raw: 0x0000000000000095
#
# The assembler refuses this program, so its slots are given above.
# As text it would read:
#   mov %r0, 0
#   (opcode 0xff)     # class ALU64, operation 0xf0 does not exist
#   exit
