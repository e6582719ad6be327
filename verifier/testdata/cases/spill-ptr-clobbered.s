# A byte store over a spilled pointer leaves seven bytes of the address:
# reading them as a number would expose it, so the read is refused.
# mem-size: 64
# want: reject pointer-leak
# insn: 2
stxdw [%r10-8], %r1
stb [%r10-8], 0      # overwrites part of the spilled pointer
ldxdw %r3, [%r10-8]  # would expose address bits
ldxb %r0, [%r3+0]    # r3 is a number
exit
