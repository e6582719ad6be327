# mov to r10, the read-only frame pointer.
# mem-size: 64
# want: reject invalid-insn
# insn: 0
# raw: 0x0000000000000ab7
# raw: 0x00000000000000b7
# raw: 0x0000000000000095
#
# The assembler refuses this program, so its slots are given above.
# As text it would read:
#   mov %r10, 0
#   mov %r0, 0
#   exit
