# A program without exit.
# mem-size: 64
# want: reject fall-through
# insn: 0
mov %r0, 0  # execution runs past the last slot
