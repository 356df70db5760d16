/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vcall.S - fdr_vcall(fn, a1, a2, a3, a4, a5): fn(a1, ..., a5) with the
 * caller's x87/SSE/AVX/AVX-512 state saved before and restored after, for code
 * compiled with -mgeneral-regs-only (a jump probe's hit, event-nv.c) that must
 * call ordinary code; errno is kept too (a hit must not change the program's).
 * Returns fn's %rax.
 *
 * The save area is on the stack, 64-byte aligned, fdr_vsave_size bytes
 * (event-nv.c measures the CPU's format when libfdr loads); its XSAVE header
 * is zeroed first, as XRSTOR requires. %rbp-based frame, with unwind
 * information: an unwinder can walk through it (a stacktrace trigger).
 */
	.text
	.globl fdr_vcall
	.protected fdr_vcall
	.type fdr_vcall, @function
	.p2align 4
fdr_vcall:
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	push	%rbx
	.cfi_offset %rbx, -24
	push	%r12
	.cfi_offset %r12, -32
	push	%r13
	.cfi_offset %r13, -40
	push	%r14
	.cfi_offset %r14, -48
	push	%r15
	.cfi_offset %r15, -56
	sub	$32, %rsp		/* -48(%rbp) a4, -56 a5, -64 &errno, -72 errno */
	mov	%rdi, %r12		/* fn */
	mov	%rsi, %r13		/* a1 .. a3: %rax and %rdx serve the save */
	mov	%rdx, %r14
	mov	%rcx, %r15
	mov	%r8, -48(%rbp)
	mov	%r9, -56(%rbp)
	mov	fdr_vsave_size(%rip), %eax
	sub	%rax, %rsp
	and	$-64, %rsp
	xor	%eax, %eax
	.irp o, 512, 520, 528, 536, 544, 552, 560, 568
	mov	%rax, \o(%rsp)
	.endr
	mov	fdr_vsave_mask(%rip), %eax
	xor	%edx, %edx
	cmpl	$1, fdr_vsave_kind(%rip)
	jb	1f
	je	2f
	xsavec64 (%rsp)
	jmp	3f
1:	fxsave64 (%rsp)
	jmp	3f
2:	xsave64	(%rsp)
3:	call	__errno_location@PLT	/* ordinary code: after the save */
	mov	%rax, -64(%rbp)
	mov	(%rax), %eax
	mov	%eax, -72(%rbp)
	mov	%r13, %rdi
	mov	%r14, %rsi
	mov	%r15, %rdx
	mov	-48(%rbp), %rcx
	mov	-56(%rbp), %r8
	call	*%r12
	mov	%rax, %rbx
	mov	-64(%rbp), %rax
	mov	-72(%rbp), %ecx
	mov	%ecx, (%rax)
	mov	fdr_vsave_mask(%rip), %eax
	xor	%edx, %edx
	cmpl	$0, fdr_vsave_kind(%rip)
	je	4f
	xrstor64 (%rsp)
	jmp	5f
4:	fxrstor64 (%rsp)
5:	mov	%rbx, %rax
	lea	-40(%rbp), %rsp
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbx
	pop	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fdr_vcall, .-fdr_vcall

	.section .note.GNU-stack, "", @progbits
