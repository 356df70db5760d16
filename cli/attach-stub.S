/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * attach-stub.S - the code fdr attach and fdr detach run in the target process
 * (cli/attach.c; docs/design/probes.md, "fdr attach"). x86-64 only.
 *
 * These bytes are copied, as they are, into a code cave of the target (the
 * unused tail of the last page of an r-x segment); they are position
 * independent and touch nothing of their own address: every datum is in the
 * frame fdr wrote on the interrupted thread's stack, below its red zone, and
 * the thread enters here with %rsp at that frame (64-byte aligned), every other
 * register as it was. Nothing else of the thread was changed, so the thread
 * needs fdr for nothing from then on: if fdr dies, the stub still runs to its
 * end and the program goes on where it was.
 *
 * The frame (offsets from %rsp at entry; ATS_* in attach.c say the same):
 *     0  iretq frame: rip, cs, rflags, rsp, ss    where the program resumes
 *    40  rax rbx rcx rdx rsi rdi rbp r8 .. r15   its registers (15 x 8)
 *   160  dlopen, dlsym, dlerror                  in the target's libc
 *   184  the address of the result block in the cave
 *   192  step 0: path, dlopen flags, symbol, argument (4 x 8)
 *   224  step 1: the same
 *   256  result block: nonce, status, step, error text (256 bytes)
 *   512  "/proc/self/mem"
 *   576  XSAVE area (x87, SSE, AVX, AVX-512 state)
 *
 * A step with a path dlopen()s it; with a symbol, dlsym()s it and calls it
 * with the argument (int f(const char *)). A failure of dlopen or dlsym makes
 * the status -2000 or -2001 and copies dlerror() into the text; a negative
 * return of the function is the status. The result block is then written into
 * the cave through /proc/self/mem (the cave is r-x: a plain store would fault),
 * the nonce last, which fdr polls for. Every register, the flags and the
 * extended state are restored and iretq resumes the program: rip, rsp and
 * rflags in one instruction, so no datum is read from below the restored %rsp
 * (a signal arriving there would overwrite it) or from the cave (a later fdr
 * attach rewrites it).
 */
	.text
	.globl fdr_attach_stub
	.globl fdr_attach_stub_end
	.type fdr_attach_stub, @function
	.p2align 4
fdr_attach_stub:
	cld
	mov %rsp, %rbx
	mov $0xe7, %eax			/* x87, SSE, AVX, opmask, ZMM: what dlopen may touch */
	xor %edx, %edx
	xsave64 576(%rbx)
	lea 192(%rbx), %r12
	call 10f
	test %rax, %rax
	js 20f
	cmpq $0, 224(%rbx)		/* no second step: the first one's status stands */
	je 20f
	lea 224(%rbx), %r12
	call 10f
20:	mov %rax, 264(%rbx)
	mov $2, %eax			/* open("/proc/self/mem", O_RDWR | O_CLOEXEC) */
	lea 512(%rbx), %rdi
	mov $02000002, %esi
	xor %edx, %edx
	syscall
	test %rax, %rax
	js 30f
	mov %rax, %r12
	mov $18, %eax			/* pwrite64(fd, status.., 248, cave + 8) */
	mov %r12, %rdi
	lea 264(%rbx), %rsi
	mov $248, %edx
	mov 184(%rbx), %r10
	add $8, %r10
	syscall
	mov $18, %eax			/* pwrite64(fd, nonce, 8, cave): last */
	mov %r12, %rdi
	lea 256(%rbx), %rsi
	mov $8, %edx
	mov 184(%rbx), %r10
	syscall
	mov $3, %eax			/* close(fd) */
	mov %r12, %rdi
	syscall
30:	mov $0xe7, %eax
	xor %edx, %edx
	xrstor64 576(%rbx)
	mov %rbx, %rsp
	mov 40(%rsp), %rax
	mov 48(%rsp), %rbx
	mov 56(%rsp), %rcx
	mov 64(%rsp), %rdx
	mov 72(%rsp), %rsi
	mov 80(%rsp), %rdi
	mov 88(%rsp), %rbp
	mov 96(%rsp), %r8
	mov 104(%rsp), %r9
	mov 112(%rsp), %r10
	mov 120(%rsp), %r11
	mov 128(%rsp), %r12
	mov 136(%rsp), %r13
	mov 144(%rsp), %r14
	mov 152(%rsp), %r15
	iretq

	/* one step, its record at %r12; %rax: 0 or the function's return, or < 0 */
10:	sub $8, %rsp			/* %rsp 16-byte aligned for the calls */
	mov %r12, %rax
	sub %rbx, %rax
	mov %rax, 272(%rbx)		/* the step (its record's offset) */
	xor %eax, %eax
	mov 0(%r12), %rdi
	test %rdi, %rdi
	jz 19f
	mov 8(%r12), %rsi
	call *160(%rbx)			/* dlopen(path, flags) */
	test %rax, %rax
	jz 15f
	mov 16(%r12), %rsi
	test %rsi, %rsi
	jz 18f
	mov %rax, %rdi
	call *168(%rbx)			/* dlsym(handle, symbol) */
	test %rax, %rax
	jz 16f
	mov 24(%r12), %rdi
	call *%rax			/* int entry(argument) */
	movslq %eax, %rax
	jmp 19f
15:	mov $-2000, %r13
	jmp 17f
16:	mov $-2001, %r13
17:	call *176(%rbx)			/* dlerror(): its text into the result */
	lea 280(%rbx), %rdi
	mov $231, %ecx
	test %rax, %rax
	jz 12f
11:	movb (%rax), %dl
	movb %dl, (%rdi)
	test %dl, %dl
	jz 13f
	inc %rax
	inc %rdi
	dec %ecx
	jnz 11b
12:	movb $0, (%rdi)
13:	mov %r13, %rax
	jmp 19f
18:	xor %eax, %eax
19:	add $8, %rsp
	ret
fdr_attach_stub_end:
	.size fdr_attach_stub, fdr_attach_stub_end - fdr_attach_stub

	.section .note.GNU-stack, "", @progbits
