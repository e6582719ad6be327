# Moving the frame pointer itself with add.
# mem-size: 64
# want: reject invalid-insn
# insn: 1
# raw: 0x000000000000a3bf
# raw: 0xfffffff800000a07
# raw: 0x00000000000000b7
# raw: 0x0000000000000095
#
# The assembler refuses this program, so its slots are given above.
# As text it would read:
#   mov %r3, %r10
#   add %r10, -8
#   mov %r0, 0
#   exit
