/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probe-targets.S - functions with known first instructions, for
 * test-probe-engine.c and bench/probe-bench.c. Each pt_* symbol is a place to
 * probe; the comment says what the instruction there is and what the
 * function returns (System V ABI: arguments in %rdi, %rsi; result in %rax).
 * pt_X_end is the byte after pt_X: the function's bounds, which the jump
 * optimiser (test-probe-jump.c) is given as the agent gives an ELF symbol's.
 */
	.text

/* pt_add(a, b) = a + b; first: mov %rdi,%rax (3 bytes, copied out of line) */
	.globl pt_add
	.type pt_add, @function
	.p2align 4
pt_add:
	mov	%rdi, %rax
	add	%rsi, %rax
	ret
	.globl pt_add_end
pt_add_end:
	.size pt_add, .-pt_add

/* pt_riprel() = pt_global; first: mov pt_global(%rip),%eax (RIP-relative load) */
	.globl pt_riprel
	.type pt_riprel, @function
	.p2align 4
pt_riprel:
	mov	pt_global(%rip), %eax
	ret
	.globl pt_riprel_end
pt_riprel_end:
	.size pt_riprel, .-pt_riprel

/* pt_riprel_store(v): pt_global2 = v, returns &pt_global2; first: RIP-relative store,
 * then a RIP-relative lea (pt_riprel_lea) */
	.globl pt_riprel_store
	.globl pt_riprel_lea
	.type pt_riprel_store, @function
	.p2align 4
pt_riprel_store:
	mov	%edi, pt_global2(%rip)
pt_riprel_lea:
	lea	pt_global2(%rip), %rax
	ret
	.globl pt_riprel_store_end
pt_riprel_store_end:
	.size pt_riprel_store, .-pt_riprel_store

/* pt_call(x) = x + 101; first: call rel32 to pt_helper (x + 100) */
	.globl pt_call
	.type pt_call, @function
	.p2align 4
pt_call:
	call	pt_helper
	add	$1, %rax
	ret
	.globl pt_call_end
pt_call_end:
	.size pt_call, .-pt_call

	.globl pt_helper
	.type pt_helper, @function
	.p2align 4
pt_helper:
	lea	100(%rdi), %rax
	ret
	.globl pt_helper_end
pt_helper_end:
	.size pt_helper, .-pt_helper

/* pt_call_ra() = the return address its call pushed: pt_call_ra + 5 */
	.globl pt_call_ra
	.type pt_call_ra, @function
	.p2align 4
pt_call_ra:
	call	pt_ret_addr
	ret
	.globl pt_call_ra_end
pt_call_ra_end:
	.size pt_call_ra, .-pt_call_ra

/* pt_ret_addr() = its own return address */
	.globl pt_ret_addr
	.type pt_ret_addr, @function
	.p2align 4
pt_ret_addr:
	mov	(%rsp), %rax
	ret
	.globl pt_ret_addr_end
pt_ret_addr_end:
	.size pt_ret_addr, .-pt_ret_addr

/* pt_callind(fn, x) = fn(?, x) via call *%rdi (the callee reads %rsi), + 1 */
	.globl pt_callind
	.type pt_callind, @function
	.p2align 4
pt_callind:
	call	*%rdi
	add	$1, %rax
	ret
	.globl pt_callind_end
pt_callind_end:
	.size pt_callind, .-pt_callind

/* pt_helper_si(?, x) = x + 200 */
	.globl pt_helper_si
	.type pt_helper_si, @function
	.p2align 4
pt_helper_si:
	lea	200(%rsi), %rax
	ret
	.globl pt_helper_si_end
pt_helper_si_end:
	.size pt_helper_si, .-pt_helper_si

/* pt_callind_mem() = return address pushed by call *pt_fnptr(%rip): pt_callind_mem + 6 */
	.globl pt_callind_mem
	.type pt_callind_mem, @function
	.p2align 4
pt_callind_mem:
	call	*pt_fnptr(%rip)
	ret
	.globl pt_callind_mem_end
pt_callind_mem_end:
	.size pt_callind_mem, .-pt_callind_mem

/* pt_jmp(x) = x + 7; first: jmp rel8 over a ud2 */
	.globl pt_jmp
	.type pt_jmp, @function
	.p2align 4
pt_jmp:
	jmp	1f
	ud2
	ud2
1:	lea	7(%rdi), %rax
	ret
	.globl pt_jmp_end
pt_jmp_end:
	.size pt_jmp, .-pt_jmp

/* pt_jmp32(x) = x + 9; first: jmp rel32 */
	.globl pt_jmp32
	.type pt_jmp32, @function
	.p2align 4
pt_jmp32:
	.byte	0xe9
	.long	1f - (pt_jmp32 + 5)
	ud2
1:	lea	9(%rdi), %rax
	ret
	.globl pt_jmp32_end
pt_jmp32_end:
	.size pt_jmp32, .-pt_jmp32

/* pt_jcc(x) = x < 10 ? 2 : 1; probe pt_jcc_br: jl rel8 */
	.globl pt_jcc
	.globl pt_jcc_br
	.type pt_jcc, @function
	.p2align 4
pt_jcc:
	cmp	$10, %rdi
pt_jcc_br:
	jl	1f
	mov	$1, %eax
	ret
1:	mov	$2, %eax
	ret
	.globl pt_jcc_end
pt_jcc_end:
	.size pt_jcc, .-pt_jcc

/* pt_jcc32(x) = x == 0 ? 3 : 4; probe pt_jcc32_br: je rel32 */
	.globl pt_jcc32
	.globl pt_jcc32_br
	.type pt_jcc32, @function
	.p2align 4
pt_jcc32:
	test	%rdi, %rdi
pt_jcc32_br:
	.byte	0x0f, 0x84
	.long	1f - (pt_jcc32_br + 6)
	mov	$4, %eax
	ret
1:	mov	$3, %eax
	ret
	.globl pt_jcc32_end
pt_jcc32_end:
	.size pt_jcc32, .-pt_jcc32

/* pt_redzone(a) = a + 5, a leaf keeping both values in its red zone; probe the
 * entry or pt_redzone_mid (after -8(%rsp) holds a, before -16(%rsp) is read) */
	.globl pt_redzone
	.globl pt_redzone_mid
	.type pt_redzone, @function
	.p2align 4
pt_redzone:
	mov	%rdi, -8(%rsp)
	movq	$5, -16(%rsp)
	movq	$0, -128(%rsp)
pt_redzone_mid:
	mov	-8(%rsp), %rax
	add	-16(%rsp), %rax
	add	-128(%rsp), %rax
	ret
	.globl pt_redzone_end
pt_redzone_end:
	.size pt_redzone, .-pt_redzone

/* pt_push(x) = x + 3, keeping %rbx; probe the entry (push) or pt_push_pop (pop) */
	.globl pt_push
	.globl pt_push_pop
	.type pt_push, @function
	.p2align 4
pt_push:
	push	%rbx
	mov	%rdi, %rbx
	lea	3(%rbx), %rax
pt_push_pop:
	pop	%rbx
	ret
	.globl pt_push_end
pt_push_end:
	.size pt_push, .-pt_push

/* pt_slow(p, x) = *p + x; first: a load from p (a cache miss when p is cold) */
	.globl pt_slow
	.type pt_slow, @function
	.p2align 4
pt_slow:
	mov	(%rdi), %rax
	add	%rsi, %rax
	ret
	.globl pt_slow_end
pt_slow_end:
	.size pt_slow, .-pt_slow

/* pt_own_int3() = 42 after the program's own int3 */
	.globl pt_own_int3
	.type pt_own_int3, @function
	.p2align 4
pt_own_int3:
	int3
	mov	$42, %eax
	ret
	.globl pt_own_int3_end
pt_own_int3_end:
	.size pt_own_int3, .-pt_own_int3

/* pt_allregs(): every general register set to a known value (rax 0x1001, rbx 0x1002,
 * rcx 0x1003, rdx 0x1004, rsi 0x1005, rdi 0x1006, rbp 0x1007, r8..r15 0x1008..0x100f),
 * %rsp saved in pt_saved_sp and CF set, at pt_allregs_probe (a nop) */
	.globl pt_allregs
	.globl pt_allregs_probe
	.type pt_allregs, @function
	.p2align 4
pt_allregs:
	push	%rbx
	push	%rbp
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	mov	$0x1001, %rax
	mov	$0x1002, %rbx
	mov	$0x1003, %rcx
	mov	$0x1004, %rdx
	mov	$0x1005, %rsi
	mov	$0x1006, %rdi
	mov	$0x1007, %rbp
	mov	$0x1008, %r8
	mov	$0x1009, %r9
	mov	$0x100a, %r10
	mov	$0x100b, %r11
	mov	$0x100c, %r12
	mov	$0x100d, %r13
	mov	$0x100e, %r14
	mov	$0x100f, %r15
	mov	%rsp, pt_saved_sp(%rip)
	stc
pt_allregs_probe:
	nop
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbp
	pop	%rbx
	ret
	.globl pt_allregs_end
pt_allregs_end:
	.size pt_allregs, .-pt_allregs

/*
 * PT_SET_REGS B: every general register but %rsp set to B + 1 .. B + 16 in
 * enum fdr_reg's order (%rsp's number, 8, skipped); PT_CHECK_REGS B: each
 * compared with that value and %rsp with pt_saved_sp, %eax = 0 if all are
 * as set, else 1 + the first one that is not (enum fdr_reg's number; 7:
 * %rsp), then on at 99f.
 */
.macro PT_SET_REGS b
	mov	$\b + 0x1, %rax
	mov	$\b + 0x2, %rbx
	mov	$\b + 0x3, %rcx
	mov	$\b + 0x4, %rdx
	mov	$\b + 0x5, %rsi
	mov	$\b + 0x6, %rdi
	mov	$\b + 0x7, %rbp
	mov	$\b + 0x9, %r8
	mov	$\b + 0xa, %r9
	mov	$\b + 0xb, %r10
	mov	$\b + 0xc, %r11
	mov	$\b + 0xd, %r12
	mov	$\b + 0xe, %r13
	mov	$\b + 0xf, %r14
	mov	$\b + 0x10, %r15
.endm

.macro PT_CHECK_REGS b
	cmp	$\b + 0x1, %rax
	jne	1f
	cmp	$\b + 0x2, %rbx
	jne	2f
	cmp	$\b + 0x3, %rcx
	jne	3f
	cmp	$\b + 0x4, %rdx
	jne	4f
	cmp	$\b + 0x5, %rsi
	jne	5f
	cmp	$\b + 0x6, %rdi
	jne	6f
	cmp	$\b + 0x7, %rbp
	jne	7f
	cmp	pt_saved_sp(%rip), %rsp
	jne	8f
	cmp	$\b + 0x9, %r8
	jne	9f
	cmp	$\b + 0xa, %r9
	jne	10f
	cmp	$\b + 0xb, %r10
	jne	11f
	cmp	$\b + 0xc, %r11
	jne	12f
	cmp	$\b + 0xd, %r12
	jne	13f
	cmp	$\b + 0xe, %r13
	jne	14f
	cmp	$\b + 0xf, %r14
	jne	15f
	cmp	$\b + 0x10, %r15
	jne	16f
	xor	%eax, %eax
	jmp	99f
1:	mov	$1, %eax
	jmp	99f
2:	mov	$2, %eax
	jmp	99f
3:	mov	$3, %eax
	jmp	99f
4:	mov	$4, %eax
	jmp	99f
5:	mov	$5, %eax
	jmp	99f
6:	mov	$6, %eax
	jmp	99f
7:	mov	$7, %eax
	jmp	99f
8:	mov	$8, %eax
	jmp	99f
9:	mov	$9, %eax
	jmp	99f
10:	mov	$10, %eax
	jmp	99f
11:	mov	$11, %eax
	jmp	99f
12:	mov	$12, %eax
	jmp	99f
13:	mov	$13, %eax
	jmp	99f
14:	mov	$14, %eax
	jmp	99f
15:	mov	$15, %eax
	jmp	99f
16:	mov	$16, %eax
	jmp	99f
.endm

/*
 * pt_regs_back(): every general register set to a known value (rax 0x2001,
 * rbx 0x2002, ... r15 0x2010, in enum fdr_reg's order: PT_SET_REGS), %rsp
 * kept in pt_saved_sp, then pt_regs_back_probe (a 4-byte nop, as GAS encodes
 * "nopl 0(%rax,%rax,1)", and the check's first instruction: a jump probe's
 * window), then each register compared with its value (PT_CHECK_REGS):
 * returns 0 if all came back, else 1 + the first one that did not (enum
 * fdr_reg's number; 7: %rsp).
 */
	.globl pt_regs_back
	.globl pt_regs_back_probe
	.type pt_regs_back, @function
	.p2align 4
pt_regs_back:
	push	%rbx
	push	%rbp
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	PT_SET_REGS 0x2000
	mov	%rsp, pt_saved_sp(%rip)
pt_regs_back_probe:
	nopl	0(%rax,%rax,1)
	PT_CHECK_REGS 0x2000
99:	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbp
	pop	%rbx
	ret
	.globl pt_regs_back_end
pt_regs_back_end:
	.size pt_regs_back, .-pt_regs_back

/*
 * pt_ret_regs_back(): calls pt_ret_regs, which sets every general register
 * but %rsp to a known value (rax 0x3001, ... r15 0x3010, in enum fdr_reg's
 * order) and returns (a return probe's trampoline runs between), then
 * compares each with its value: 0 if all came back, else 1 + the first one
 * that did not (7: %rsp, against the value before the call).
 */
	.globl pt_ret_regs
	.type pt_ret_regs, @function
	.p2align 4
pt_ret_regs:
	PT_SET_REGS 0x3000		/* the first, 7 bytes: a jump probe's window */
	ret
	.globl pt_ret_regs_end
pt_ret_regs_end:
	.size pt_ret_regs, .-pt_ret_regs

	.globl pt_ret_regs_back
	.type pt_ret_regs_back, @function
	.p2align 4
pt_ret_regs_back:
	push	%rbx
	push	%rbp
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	sub	$8, %rsp			/* aligned at the call, as the ABI has it */
	mov	%rsp, pt_saved_sp(%rip)
	call	pt_ret_regs
	PT_CHECK_REGS 0x3000
99:	add	$8, %rsp
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbp
	pop	%rbx
	ret
	.globl pt_ret_regs_back_end
pt_ret_regs_back_end:
	.size pt_ret_regs_back, .-pt_ret_regs_back

/* pt_nop() = 0; for the benchmark: a trivial function */
	.globl pt_nop
	.type pt_nop, @function
	.p2align 4
pt_nop:
	xor	%eax, %eax
	ret
	.globl pt_nop_end
pt_nop_end:
	.size pt_nop, .-pt_nop

/* ---- jump-optimised probes (test-probe-jump.c, bench/probe-bench.c) ---- */

/* pt_flags(f) = RFLAGS after a 4-byte nop at pt_flags_probe (with pushfq, a
 * window of two instructions) run with RFLAGS = f (the arithmetic flags and
 * DF; DF cleared again before the return) */
	.globl pt_flags
	.globl pt_flags_probe
	.type pt_flags, @function
	.p2align 4
pt_flags:
	push	%rdi
	popfq
pt_flags_probe:
	nopl	0(%rax,%rax,1)
	pushfq
	pop	%rax
	cld
	ret
	.globl pt_flags_end
pt_flags_end:
	.size pt_flags, .-pt_flags

/*
 * pt_nop5() = 0; first: a 5-byte nop (nopl 0x0(%rax,%rax,1), its bytes written
 * out: GAS drops the zero displacement and makes it 4 bytes), then
 * xor %eax,%eax; ret
 */
	.globl pt_nop5
	.type pt_nop5, @function
	.p2align 4
pt_nop5:
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
	xor	%eax, %eax
	ret
	.globl pt_nop5_end
pt_nop5_end:
	.size pt_nop5, .-pt_nop5

/* pt_loop(n) = n (n >= 1): mov $0,%eax ; 1: add $1,%eax ; cmp ; jne 1b: a branch
 * into the second instruction of the window at the entry */
	.globl pt_loop
	.type pt_loop, @function
	.p2align 4
pt_loop:
	xor	%eax, %eax
1:	add	$1, %rax
	cmp	%rdi, %rax
	jne	1b
	ret
	.globl pt_loop_end
pt_loop_end:
	.size pt_loop, .-pt_loop

/* pt_jtable(i) = 10 + i for i in 0..2 (else 0): a jump table (jmp *(%rdx,%rdi,8)) */
	.globl pt_jtable
	.type pt_jtable, @function
	.p2align 4
pt_jtable:
	xor	%eax, %eax
	cmp	$2, %rdi
	ja	9f
	lea	pt_jtab(%rip), %rdx
	jmp	*(%rdx,%rdi,8)
2:	mov	$10, %eax
	ret
3:	mov	$11, %eax
	ret
4:	mov	$12, %eax
	ret
9:	ret
	.globl pt_jtable_end
pt_jtable_end:
	.size pt_jtable, .-pt_jtable
	.section .data.rel.ro,"aw"
	.p2align 3
pt_jtab:
	.quad	2b, 3b, 4b
	.text

/* pt_addsd(a, b) = a + b (doubles); first: addsd %xmm1,%xmm0 (4) ; ret */
	.globl pt_addsd
	.type pt_addsd, @function
	.p2align 4
pt_addsd:
	addsd	%xmm1, %xmm0
	ret
	.globl pt_addsd_end
pt_addsd_end:
	.size pt_addsd, .-pt_addsd

/* pt_vaddpd(p): p[0..3] += p[4..7] (doubles) through %ymm0/%ymm1, the probe at
 * pt_vaddpd_add (vaddpd %ymm1,%ymm0,%ymm0 ; vmovupd %ymm0,(%rdi)): ymm live there */
	.globl pt_vaddpd
	.globl pt_vaddpd_add
	.type pt_vaddpd, @function
	.p2align 4
pt_vaddpd:
	vmovupd	(%rdi), %ymm0
	vmovupd	32(%rdi), %ymm1
pt_vaddpd_add:
	vaddpd	%ymm1, %ymm0, %ymm0
	vmovupd	%ymm0, (%rdi)
	vzeroupper
	ret
	.globl pt_vaddpd_end
pt_vaddpd_end:
	.size pt_vaddpd, .-pt_vaddpd

/* pt_sys(a1, a2, a3, nr) = syscall nr(a1, a2, a3): mov %ecx,%eax ; syscall ; ret, a
 * 5-byte window in which a thread blocks (RIP inside the window) */
	.globl pt_sys
	.type pt_sys, @function
	.p2align 4
pt_sys:
	mov	%ecx, %eax
	syscall
	ret
	.globl pt_sys_end
pt_sys_end:
	.size pt_sys, .-pt_sys

/*
 * pt_stack_args(a, b, c, d, e, f, g, h) = 2g + h, its two last arguments on the
 * stack, or -1 if %rsp + 8 is not 16-byte aligned (the ABI's rule at a
 * function's first instruction); first: lea 8(%rsp),%rax (exactly 5 bytes).
 * A return probe's call path (jump.c, jp_emit_slow()) must leave the
 * function's stack as the caller made it.
 */
	.globl pt_stack_args
	.type pt_stack_args, @function
	.p2align 4
pt_stack_args:
	lea	8(%rsp), %rax
	test	$15, %al
	jnz	1f
	mov	8(%rsp), %rax
	add	%rax, %rax
	add	16(%rsp), %rax
	ret
1:	mov	$-1, %rax
	ret
	.globl pt_stack_args_end
pt_stack_args_end:
	.size pt_stack_args, .-pt_stack_args

	.data
	.globl pt_global
	.globl pt_global2
	.p2align 3
pt_global:
	.long	0x1234567
pt_global2:
	.long	0
	.p2align 3
	.globl pt_fnptr		/* test-probe-jump.c points it elsewhere for a while */
pt_fnptr:
	.quad	pt_ret_addr
	.globl pt_saved_sp
pt_saved_sp:
	.quad	0

	.section .note.GNU-stack,"",@progbits
