# ja past the last slot of the program.
# mem-size: 64
# want: reject invalid-insn
# insn: 1
# raw: 0x00000000000000b7
# raw: 0x0000000000010005
# raw: 0x0000000000000095
#
# The assembler refuses this program, so its slots are given above.
# As text it would read:
#   mov %r0, 0
#   ja +1             # slot 3: the program has slots 0..2
#   exit
