# An atomic fetch-add whose source (which it overwrites) is r10.
# mem-size: 64
# want: reject invalid-insn
# insn: 0
# raw: 0x000000010000a1db
# raw: 0x00000000000000b7
# raw: 0x0000000000000095
#
# The assembler refuses this program, so its slots are given above.
# As text it would read:
#   lock fetch add [%r1+0], %r10   # fetch writes the old value into r10
#   mov %r0, 0
#   exit
