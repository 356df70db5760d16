/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tramp.S - the return-probe trampoline and its unwind information (x86-64).
 *
 * A return probe writes fdr_probe_ret_tramp over the return address of the
 * function it probes (engine.c, "Return probes"), at the int3 or in the jump
 * trampoline of its entry. The function returns there, and the code below
 * reports the return and goes on to the real return address, with no trap.
 * A jump trampoline that made the hijack called the function from
 * fdr_probe_ret_call, just before fdr_probe_ret_tramp, so that the CPU
 * predicts the function's ret; the code below then goes on by a ret, which
 * it predicts too (jump.c, jp_emit_slow()). Until then, an unwinder that
 * walks the stack (a C++ exception, pthread_exit()'s forced unwind,
 * backtrace(), gdb) finds the trampoline as the function's return address, so
 * it needs unwind information for it: the .eh_frame entry below, found like any other through
 * libfdr-probe's PT_GNU_EH_FRAME (no registration at run time).
 *
 *   caller:   call f            f's frame        the "trampoline frame"
 *   S:        [fdr_probe_ret_tramp]  <- the slot the hijack wrote (S = CFA-8)
 *
 * The trampoline frame's rules: CFA = %rsp (the caller's %rsp after the ret,
 * S + 8); the return address is a DW_CFA_val_expression that looks S up in
 * fdr_probe_ret_table, the global table of pending returns (engine.c), and
 * yields the real return address, or 0 (end of the stack) if S is not there.
 * An expression cannot read thread-local storage, hence the global table. It
 * cannot hold the table's address either (.eh_frame is read-only, and a
 * relocation there would be a text relocation), so it finds it from the
 * trampoline: *(CFA-8) is the trampoline's address (the slot still holds it:
 * that is how the unwinder got here), and the word 7 bytes after the int3
 * holds the table's offset from that word.
 *
 *	S    = CFA - 8
 *	tab  = (T + 7) + *(T + 7), T = *S
 *	h    = (S * 0x9e3779b97f4a7c15) >> (64 - 12)   (engine.c's pr_rtab_hash)
 *	for j in 0..7: if tab[h + j].key == S: return tab[h + j].val
 *	return 0
 *
 * Its personality, fdr_probe_ret_personality (engine.c), is called only by a
 * phase-2 unwind (an exception on its way to a handler above, or a forced
 * unwind): it sends the unwinder to fdr_probe_ret_pad, which drops the
 * pending entry (the function will never return), puts the real return
 * address back in S and resumes the unwind with _Unwind_Resume() from a frame
 * that looks called from the caller. Phase 1 (the search) and backtraces run
 * no personality; they only read the table.
 */
	.text

/* the return-address expression above, as DW_CFA_val_expression bytes (114 of them) */
.macro PR_RA_EXPR
	.cfi_escape 0x16, 0x10, 114		/* DW_CFA_val_expression r16 (RA), length */
	.cfi_escape 0x12, 0x38, 0x1c		/* dup; lit8; minus		: CFA S */
	.cfi_escape 0x12, 0x06, 0x23, 0x07	/* dup; deref; plus_uconst 7	: CFA S T+7 */
	.cfi_escape 0x12, 0x06, 0x22		/* dup; deref; plus		: CFA S tab */
	.cfi_escape 0x14			/* over				: CFA S tab S */
	.cfi_escape 0x0e, 0x15, 0x7c, 0x4a, 0x7f, 0xb9, 0x79, 0x37, 0x9e /* const8u golden */
	.cfi_escape 0x1e, 0x08, 0x34, 0x25	/* mul; const1u 52; shr		: CFA S tab h */
	.cfi_escape 0x34, 0x24, 0x22		/* lit4; shl; plus		: CFA S &tab[h] */
	/* 8 probes of 10 bytes: dup; deref; pick 2; eq; bra found; plus_uconst 16 */
	.irp j, 0, 1, 2, 3, 4, 5, 6, 7
	.cfi_escape 0x12, 0x06, 0x15, 0x02, 0x29, 0x28, 76 - 10 * \j, 0, 0x23, 0x10
	.endr
	.cfi_escape 0x30, 0x2f, 3, 0		/* lit0; skip end		: not found: 0 */
	.cfi_escape 0x23, 0x08, 0x06		/* found: plus_uconst 8; deref	: the value */
.endm

/*
 * The way back from fdr_probe_ret_fire(), %rsp at the struct: the flags
 * without popfq, as jump.c's trampoline does: DF set again if it was, OF
 * through add $0x7f to 0 or 1, the rest by sahf; nothing after this changes
 * a flag (mov, lea, jmp, ret). Then only what the C code may have changed:
 * the caller-saved registers, and %rbx.
 */
.macro PR_RET_BACK
	mov	136(%rsp), %rax
	bt	$10, %eax
	jnc	1f
	std
1:	mov	%eax, %edx
	shr	$11, %edx
	and	$1, %edx
	mov	%al, %ah
	mov	%dl, %al
	add	$0x7f, %al
	sahf
	mov	0(%rsp), %rax
	mov	16(%rsp), %rcx
	mov	24(%rsp), %rdx
	mov	32(%rsp), %rsi
	mov	40(%rsp), %rdi
	mov	64(%rsp), %r8
	mov	72(%rsp), %r9
	mov	80(%rsp), %r10
	mov	88(%rsp), %r11
	mov	8(%rsp), %rbx
	.cfi_restore %rbx
.endm

/*
 * The trampoline. A hijacked return lands on fdr_probe_ret_tramp with %rsp =
 * S + 8, and nothing traps: a jmp over the table's offset word (at T + 7, the
 * expression's constant) to the body, which writes a struct fdr_probe_regs
 * (FLAGS by pushfq, the rest by moves, as a jump probe's trampoline does,
 * jump.c), calls fdr_probe_ret_fire() (engine.c: finds the entry, runs the
 * return probes, frees the table slot, returns the real return address),
 * writes that address into S, loads back the flags and the registers the C
 * code may have changed and jumps there. The body's unwind rules follow its
 * stores; the return address is the expression above until S holds the real
 * one, then S itself. The byte before T is covered too (an unwinder
 * looks up the return address minus one).
 *
 * FDR_HIT_NOVEC (the usual build): fdr_probe_ret_fire() and what it calls use
 * general registers only, so the vector state is not saved (the return value
 * in %xmm0/%st0 stays); other builds call it through fdr_vcall(), which saves
 * that state and errno around it (docs/design/probes.md, "A hit without the
 * vector state").
 *
 *	struct fdr_probe_regs, from its base B = S - 168 (CFA = S + 8 = B + 176):
 *	rax rbx rcx rdx rsi rdi rbp SP r8 .. r15 IP FLAGS CS SS probe_addr
 */
	.globl fdr_probe_ret_tramp
	.hidden fdr_probe_ret_tramp
	.type fdr_probe_ret_tramp_area, @function
	.p2align 4
fdr_probe_ret_tramp_area:
	.cfi_startproc simple
	.cfi_personality 0x1b, fdr_probe_ret_personality	/* pcrel sdata4: same object */
	.cfi_def_cfa %rsp, 0
	PR_RA_EXPR
	/*
	 * A jump trampoline's call path (jump.c, jp_emit_slow()) comes here with
	 * %rsp = S + 8, S holding fdr_probe_ret_tramp already (the hijack) and
	 * the address of its copy of the displaced instructions at S - 8 (below
	 * %rsp, in the red zone no signal frame takes): the call writes
	 * fdr_probe_ret_tramp into S again, so the function's ret to it is
	 * predicted. Its last byte is the byte before T, which an unwinder
	 * looks up: the same rules cover both.
	 */
	.globl fdr_probe_ret_call
	.hidden fdr_probe_ret_call
fdr_probe_ret_call:
	call	*-16(%rsp)
fdr_probe_ret_tramp:
	jmp	pr_ret_body		/* 2 bytes: the word below stays at T + 7 */
	.org fdr_probe_ret_tramp + 7, 0xcc	/* exactly: the expression adds 7 */
pr_rtab_rel:
	.quad fdr_probe_ret_table - pr_rtab_rel	/* at T + 7: the table, from here */
pr_ret_body:
	lea	-32(%rsp), %rsp		/* S is kept: probe_addr, SS, CS (filled in C) */
	.cfi_adjust_cfa_offset 32
	pushfq				/* FLAGS */
	.cfi_adjust_cfa_offset 8
	lea	-136(%rsp), %rsp	/* B; IP and SP filled below, in C */
	.cfi_adjust_cfa_offset 136
	/* the rest by moves, as jump.c's trampoline: one store each */
	mov	%rax, 0(%rsp)
	mov	%rbx, 8(%rsp)
	.cfi_offset %rbx, -168
	mov	%rcx, 16(%rsp)
	mov	%rdx, 24(%rsp)
	mov	%rsi, 32(%rsp)
	mov	%rdi, 40(%rsp)
	mov	%rbp, 48(%rsp)
	.cfi_offset %rbp, -128
	mov	%r8, 64(%rsp)
	mov	%r9, 72(%rsp)
	mov	%r10, 80(%rsp)
	mov	%r11, 88(%rsp)
	mov	%r12, 96(%rsp)
	.cfi_offset %r12, -80
	mov	%r13, 104(%rsp)
	.cfi_offset %r13, -72
	mov	%r14, 112(%rsp)
	.cfi_offset %r14, -64
	mov	%r15, 120(%rsp)
	.cfi_offset %r15, -56
	lea	176(%rsp), %rax
	mov	%rax, 56(%rsp)		/* SP = S + 8, as after the ret */
	mov	%rsp, %rbx
	.cfi_def_cfa_register %rbx
	testb	$4, 137(%rsp)		/* cld where DF is set (rare: cld is microcoded) */
	jz	1f
	cld
1:	and	$-16, %rsp
#ifdef FDR_HIT_NOVEC
	mov	%rbx, %rdi
	call	fdr_probe_ret_fire
#else
	lea	fdr_probe_ret_fire(%rip), %rdi
	mov	%rbx, %rsi
	call	fdr_vcall@PLT
#endif
	mov	%rbx, %rsp
	.cfi_def_cfa_register %rsp
	/* %rbp and %r12-%r15 are callee-saved: the C code gave them back as they were */
	.cfi_restore %rbp
	.cfi_restore %r12
	.cfi_restore %r13
	.cfi_restore %r14
	.cfi_restore %r15
	/*
	 * Bit 63 of what it returned: the entry was made on a jump
	 * trampoline's call path, whose return goes on by a ret, which the
	 * return stack buffer predicts (the call pushed the caller's return
	 * there, and the function's ret took only ours); otherwise by a jmp (the
	 * function's ret mispredicted and took the caller's).
	 */
	btr	$63, %rax
	mov	%rax, 168(%rsp)		/* S = the real return address */
	.cfi_offset %rip, -8
	jc	2f
	.cfi_remember_state
	PR_RET_BACK
	lea	176(%rsp), %rsp		/* the struct, probe_addr, SS, CS and S: %rsp = S + 8 */
	.cfi_adjust_cfa_offset -176
	jmp	*-8(%rsp)		/* S: below %rsp, in the red zone no signal frame takes */
2:	.cfi_restore_state
	PR_RET_BACK
	lea	168(%rsp), %rsp		/* the struct, probe_addr, SS and CS: %rsp = S */
	.cfi_adjust_cfa_offset -168
	ret
	.cfi_endproc
	.size fdr_probe_ret_tramp_area, .-fdr_probe_ret_tramp_area

/*
 * fdr_probe_ret_pad - where the personality sends a phase-2 unwind that
 * passes a pending return. Entered with the trampoline frame's registers
 * (%rsp = S + 8, the callee-saved ones the caller's) and %rax = the
 * _Unwind_Exception. fdr_probe_ret_unwound(S) drops the entry and gives the
 * real return address, which goes back into S: from then on this is an
 * ordinary frame called from the caller, and _Unwind_Resume() unwinds on
 * from it.
 */
	.globl fdr_probe_ret_pad
	.hidden fdr_probe_ret_pad
	.type fdr_probe_ret_pad, @function
	.p2align 4
fdr_probe_ret_pad:
	.cfi_startproc simple
	.cfi_def_cfa %rsp, 0
	PR_RA_EXPR
	lea	-8(%rsp), %rsp		/* %rsp = S */
	.cfi_def_cfa_offset 8
	push	%rax			/* the exception; %rsp = S - 8, 16-byte aligned */
	.cfi_def_cfa_offset 16
	lea	8(%rsp), %rdi
	call	fdr_probe_ret_unwound
	mov	%rax, 8(%rsp)		/* S = the real return address */
	.cfi_offset %rip, -8
	pop	%rdi
	.cfi_def_cfa_offset 8
	sub	$8, %rsp
	.cfi_def_cfa_offset 16
	call	_Unwind_Resume@PLT
	ud2
	.cfi_endproc
	.size fdr_probe_ret_pad, .-fdr_probe_ret_pad

	.section .note.GNU-stack, "", @progbits
