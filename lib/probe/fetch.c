// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fetch.c - run a probe's fetch program on a hit, inside the traced process.
 *
 * A hit gives the registers it saw (regs.h) and a scratch buffer; the program
 * (fetch.h) fills the record the kernel's uprobe would have written:
 *
 *   0      8                16 (24 for a return probe)          fixed_size
 *   +------+----------------+---------------------------------+---------------+
 *   |common| __probe_ip     | arg fields, packed, no padding  | string bytes  |
 *   |header| (__probe_func, |  ints, arrays, __data_loc words | (data_loc     |
 *   |      | __probe_ret_ip)|                                 |  points here) |
 *   +------+----------------+---------------------------------+---------------+
 *
 * The common header is the caller's (libfdr fills it when it commits). Each
 * argument is a run of loads (register, stack word, immediate, dereference)
 * then one store. For `s=+8(+0(%si)):string` the program is
 *
 *   REG si; DEREF 0; ST_STRING imm=8 field=24
 *
 * i.e. the last dereference of a memory argument is done by its store, which
 * reads exactly the bytes the type needs (a u8 at the last byte of a page must
 * not fault on the next one).
 *
 * User memory is read without ever faulting the process: an address can be
 * anything a register held. process_vm_readv() on our own pid copies through the
 * kernel, which answers EFAULT for an unmapped or unreadable page instead of
 * raising SIGSEGV. Where that system call is refused (a seccomp profile, ENOSYS)
 * the fallback is the pipe trick: write(2) the bytes into a per-thread pipe (the
 * kernel reads them, or says EFAULT), then read them back. Measured here
 * (bench/fetch-read.c, docs/design/uprobes.md) both cost about 1 us a read, a
 * system call being 160-250 ns on this machine: process_vm_readv() is the
 * default because it needs no file descriptor per thread and nothing to redo
 * after fork(); the pipe is kept for where it is refused.
 *
 * Faults are recorded as the kernel records them: a string gets a __data_loc of
 * length 0, which prints "(fault)"; an integer or array element gets 0.
 *
 * Everything here is async-signal-safe (it runs in a SIGTRAP handler), keeps
 * errno, allocates nothing and takes no lock. The program must have passed
 * fdr_fetch_check() first: fdr_fetch_run() trusts its bounds.
 *
 * The run path (fdr_fetch_run() and what it calls) is part of a jump probe's
 * hit, which saves no vector register (docs/design/probes.md, "A hit without
 * the vector state"): this file is compiled with -mgeneral-regs-only where the
 * build allows it, and the run path calls nothing in libc. System calls are
 * made with the syscall instruction (fr_sys(): errno is never written), and
 * bytes are copied and cleared by fr_copy() and fr_zero(), not by libc's
 * memcpy() and memset(), which use vector registers. tests/unit/check-hit-path.py
 * disassembles it to make sure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "probe/fetch.h"

/* ---- no libc on the run path -------------------------------------------------------- */

/* A system call: the result, or -errno; errno is left alone. */
static inline long fr_sys(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* memcpy() and memset() without libc (rep movsb/stosb: general registers only) */
static inline void fr_copy(void *dst, const void *src, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static inline void fr_zero(void *dst, size_t n)
{
	__asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(0) : "memory");
}

/* ---- reading user memory without faulting ------------------------------------------ */

static _Atomic int fr_mode = FDR_FETCH_READ_AUTO;

/* Each thread's pipe for the fallback, made on its first use (fds + 1; 0 = none). */
static __thread __attribute__((tls_model("initial-exec"))) int fr_pipe_r, fr_pipe_w;

/*
 * A child of fork() has the forking thread's pipe fds, shared with the parent:
 * the two would read each other's bytes. The child makes its own on first use.
 */
static void fr_atfork_child(void)
{
	if (fr_pipe_w) {
		close(fr_pipe_r - 1);
		close(fr_pipe_w - 1);
		fr_pipe_r = fr_pipe_w = 0;
	}
}

__attribute__((constructor)) static void fr_init(void)
{
	pthread_atfork(NULL, NULL, fr_atfork_child);
}

/** fdr_fetch_set_read_mode - force one way of reading memory (tests, measurement) */
void fdr_fetch_set_read_mode(enum fdr_fetch_read_mode m)
{
	atomic_store_explicit(&fr_mode, (int)m, memory_order_relaxed);
}

static int fr_read_vm(void *dst, uint64_t addr, size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)addr, n };
	long r = fr_sys(SYS_process_vm_readv, fr_sys(SYS_getpid, 0, 0, 0, 0, 0, 0), (long)&local, 1,
			(long)&remote, 1, 0);

	if (r == (long)n)
		return 0;
	if (r == -ENOSYS || r == -EPERM)
		return -ENOSYS;
	return -EFAULT;
}

static int fr_read_pipe(void *dst, uint64_t addr, size_t n)
{
	char drain[256];
	long w, r;
	size_t got = 0;

	if (!fr_pipe_w) {
		int p[2];

		if (fr_sys(SYS_pipe2, (long)p, O_CLOEXEC | O_NONBLOCK, 0, 0, 0, 0) != 0)
			return -EFAULT; /* no fd left: nothing can be read, as a fault */
		fr_pipe_r = p[0] + 1;
		fr_pipe_w = p[1] + 1;
	}
	/*
	 * n is at most a page (strings are read page by page): well under the pipe's
	 * size. Raw system calls (also: a sanitizer's write() interceptor would
	 * check the bytes as an object of the program, which they need not be).
	 */
	w = fr_sys(SYS_write, fr_pipe_w - 1, (long)addr, (long)n, 0, 0, 0);
	if (w <= 0)
		return -EFAULT;
	while (got < (size_t)w) {
		r = fr_sys(
			SYS_read, fr_pipe_r - 1, (long)((size_t)w == n ? (char *)dst + got : drain),
			(long)((size_t)w == n ? (size_t)w - got :
						((size_t)w - got < sizeof(drain) ? (size_t)w - got :
										   sizeof(drain))),
			0, 0, 0);
		if (r <= 0)
			return -EFAULT;
		got += (size_t)r;
	}
	return (size_t)w == n ? 0 : -EFAULT;
}

/**
 * fdr_fetch_read_mem - copy @n bytes of this process's memory at @addr
 * @dst: where to (ordinary memory of the caller)
 *
 * Never faults: returns 0, or -EFAULT if any byte cannot be read (the contents
 * of @dst are then undefined). Async-signal-safe; keeps errno.
 */
int fdr_fetch_read_mem(void *dst, uint64_t addr, size_t n)
{
	int mode = atomic_load_explicit(&fr_mode, memory_order_relaxed), ret;

	if (!n)
		return 0;
	if (addr + n < addr)
		return -EFAULT;
	if (mode != FDR_FETCH_READ_PIPE) {
		ret = fr_read_vm(dst, addr, n);
		if (ret != -ENOSYS)
			return ret;
		if (mode == FDR_FETCH_READ_VM)
			return -EFAULT;
		/* refused for good: every later read takes the pipe */
		atomic_store_explicit(&fr_mode, FDR_FETCH_READ_PIPE, memory_order_relaxed);
	}
	return fr_read_pipe(dst, addr, n);
}

/* ---- checking a program ------------------------------------------------------------- */

static int fc_fail(const char **why, const char *msg)
{
	if (why)
		*why = msg;
	return -EINVAL;
}

static int fc_is_load(uint8_t op)
{
	return op >= FDR_FOP_REG && op <= FDR_FOP_DEREF;
}

/**
 * fdr_fetch_check - bound every field of a program before it is run
 * @prog: a private copy (shared memory can change between check and use)
 * @len: bytes available at @prog
 * @why: if not NULL, set to a static text saying what is wrong
 *
 * Checks the header against @len, each instruction's operation and operands,
 * that every argument is loads then one store, that stores write inside the
 * fixed part of the record after the probe's own fields, and that immediate
 * strings lie inside the data. Returns 0 or -EINVAL.
 */
int fdr_fetch_check(const struct fdr_fetch_prog *prog, size_t len, const char **why)
{
	uint32_t i, nr_stores = 0, depth = 0, first;

	if (len < sizeof(*prog))
		return fc_fail(why, "shorter than its header");
	if (prog->magic != FDR_FETCH_MAGIC || prog->version != FDR_FETCH_VERSION)
		return fc_fail(why, "bad magic or version");
	if (prog->flags & ~FDR_FETCH_F_RETURN)
		return fc_fail(why, "unknown flags");
	if (prog->nr_insns > FDR_FETCH_MAX_INSNS || prog->nr_args > FDR_FETCH_MAX_ARGS)
		return fc_fail(why, "too many instructions or arguments");
	if (prog->size > len || prog->size > FDR_FETCH_MAX_SIZE ||
	    prog->size != fdr_fetch_prog_bytes(prog->nr_insns, prog->data_len))
		return fc_fail(why, "size does not match its contents");
	first = prog->flags & FDR_FETCH_F_RETURN ? 24 : 16;
	if (prog->fixed_size < first || prog->fixed_size > FDR_FETCH_MAX_RECORD)
		return fc_fail(why, "fixed_size out of range");
	for (i = 0; i < prog->nr_insns; i++) {
		const struct fdr_fetch_insn *in = &prog->insns[i];
		uint32_t end;

		if (fc_is_load(in->op)) {
			if (in->op == FDR_FOP_DEREF && depth == 0)
				return fc_fail(why, "dereference without a value");
			if (in->op != FDR_FOP_DEREF && depth != 0)
				return fc_fail(why, "two loads in one argument");
			if (++depth > FDR_FETCH_MAX_DEPTH)
				return fc_fail(why, "dereferences nested too deep");
			if (in->op == FDR_FOP_REG && (uint64_t)in->imm >= FDR_REG_NR)
				return fc_fail(why, "bad register");
			if (in->op == FDR_FOP_STACK && (uint64_t)in->imm > (1u << 20))
				return fc_fail(why, "stack index out of range");
			if (in->op == FDR_FOP_ARG && (in->imm < 1 || in->imm > 1024))
				return fc_fail(why, "argument number out of range");
			continue;
		}
		if (in->op < FDR_FOP_ST_RAW || in->op >= FDR_FOP_NR)
			return fc_fail(why, "unknown operation");
		if (in->size != 1 && in->size != 2 && in->size != 4 && in->size != 8)
			return fc_fail(why, "bad element size");
		if (in->count < 1 || in->count > FDR_FETCH_MAX_ARRAY)
			return fc_fail(why, "bad element count");
		end = (uint32_t)in->field + (uint32_t)in->size * in->count;
		if (in->field < first || end > prog->fixed_size)
			return fc_fail(why, "field outside the record");
		if (in->bf_width) {
			if ((in->op != FDR_FOP_ST_RAW && in->op != FDR_FOP_ST_MEM) ||
			    (uint32_t)in->bf_width + in->bf_offset > 8u * in->size)
				return fc_fail(why, "bad bitfield");
		} else if (in->bf_offset) {
			return fc_fail(why, "bad bitfield");
		}
		switch (in->op) {
		case FDR_FOP_ST_RAW:
			if (depth == 0 || in->count != 1)
				return fc_fail(why, "raw store needs one value");
			break;
		case FDR_FOP_ST_MEM:
			if (depth == 0)
				return fc_fail(why, "memory store without an address");
			break;
		case FDR_FOP_ST_STRING:
			if (depth == 0 || in->size != 4 || in->count != 1)
				return fc_fail(why, "bad string store");
			break;
		case FDR_FOP_ST_COMM:
			if (depth != 0 || in->size != 4 || in->count != 1)
				return fc_fail(why, "bad comm store");
			break;
		default: /* FDR_FOP_ST_DATA */
			if (depth != 0 || in->size != 4 || in->count != 1 || in->imm < 0 ||
			    ((uint64_t)in->imm >> 16) + ((uint64_t)in->imm & 0xffff) >
				    prog->data_len)
				return fc_fail(why, "immediate string outside the data");
			break;
		}
		depth = 0;
		nr_stores++;
	}
	if (depth != 0)
		return fc_fail(why, "last argument has no store");
	if (nr_stores != prog->nr_args)
		return fc_fail(why, "nr_args does not match the stores");
	return 0;
}

/* ---- running it ----------------------------------------------------------------------- */

static void fr_put(unsigned char *p, uint64_t v, unsigned size)
{
	/* little-endian, as the record is read by the format machinery */
	switch (size) {
	case 1: {
		uint8_t x = (uint8_t)v;
		memcpy(p, &x, 1);
		break;
	}
	case 2: {
		uint16_t x = (uint16_t)v;
		memcpy(p, &x, 2);
		break;
	}
	case 4: {
		uint32_t x = (uint32_t)v;
		memcpy(p, &x, 4);
		break;
	}
	default:
		memcpy(p, &v, 8);
		break;
	}
}

static uint64_t fr_get(const unsigned char *p, unsigned size)
{
	uint8_t a;
	uint16_t b;
	uint32_t c;
	uint64_t d;

	switch (size) {
	case 1:
		memcpy(&a, p, 1);
		return a;
	case 2:
		memcpy(&b, p, 2);
		return b;
	case 4:
		memcpy(&c, p, 4);
		return c;
	default:
		memcpy(&d, p, 8);
		return d;
	}
}

static uint64_t fr_bitfield(uint64_t v, const struct fdr_fetch_insn *in)
{
	if (!in->bf_width)
		return v;
	v >>= in->bf_offset;
	return in->bf_width >= 64 ? v : v & ((1ull << in->bf_width) - 1);
}

/* The word at @addr, or 0 and *fault set. */
static uint64_t fr_word(uint64_t addr, int *fault)
{
	uint64_t v;

	if (fdr_fetch_read_mem(&v, addr, 8)) {
		*fault = 1;
		return 0;
	}
	return v;
}

/*
 * The string at @addr into @dst (at most @max bytes, NUL included), page by
 * page so that no read crosses into a page the string does not reach. Returns
 * its length with the NUL, or 0 if it cannot be read (the kernel's fault).
 */
static uint32_t fr_string(unsigned char *dst, uint64_t addr, uint32_t max)
{
	uint32_t got = 0;

	if (!max)
		return 0;
	while (got < max) {
		uint32_t chunk = 4096 - (uint32_t)((addr + got) & 4095), k;

		if (chunk > max - got)
			chunk = max - got;
		if (fdr_fetch_read_mem(dst + got, addr + got, chunk))
			return 0;
		for (k = 0; k < chunk; k++) /* memchr(), without libc */
			if (!dst[got + k])
				return got + k + 1;
		got += chunk;
	}
	dst[max - 1] = 0; /* cut, as strncpy_from_user() into the kernel's record */
	return max;
}

/* The System V argument registers: $arg1 .. $arg6 */
static const uint8_t fr_arg_regs[6] = { FDR_REG_DI, FDR_REG_SI, FDR_REG_DX,
					FDR_REG_CX, FDR_REG_R8, FDR_REG_R9 };

/**
 * fdr_fetch_fast_make - the table form of @prog (fetch.h), if it has one
 * @prog: a program fdr_fetch_check() accepted
 * @f: filled; f->nr = 0 if @prog does not run that way
 *
 * Returns 1 if @f can run @prog (fdr_fetch_fast_run()), else 0.
 */
int fdr_fetch_fast_make(const struct fdr_fetch_prog *prog, struct fdr_fetch_fast *f)
{
	unsigned int first = prog->flags & FDR_FETCH_F_RETURN ? 3 : 2, nr = 0, i;
	unsigned int end = first * 8; /* where the previous field ended */
	int reg = -1;

	f->nr = 0;
	if (!prog->nr_args || prog->nr_args > FDR_FETCH_FAST_ARGS ||
	    prog->fixed_size > FDR_FETCH_FAST_WORDS * 8)
		return 0;
	for (i = 0; i < prog->nr_insns; i++) {
		const struct fdr_fetch_insn *in = &prog->insns[i];
		unsigned int off = in->field, bits;

		switch (in->op) {
		case FDR_FOP_REG:
			reg = (int)in->imm;
			break;
		case FDR_FOP_ARG:
			if (in->imm > 6)
				return 0; /* on the stack: a read */
			reg = fr_arg_regs[in->imm - 1];
			break;
		case FDR_FOP_RETVAL:
			reg = FDR_REG_AX;
			break;
		case FDR_FOP_STACKP:
			reg = FDR_REG_SP;
			break;
		case FDR_FOP_ST_RAW:
			bits = in->size * 8u;
			/* in order, none over another, inside the fixed part */
			if (reg < 0 || in->bf_width || in->count != 1 || off < end ||
			    off + in->size > prog->fixed_size)
				return 0;
			end = off + in->size;
			f->arg[nr].reg = (uint8_t)reg;
			f->arg[nr].word = (uint8_t)(off / 8);
			f->arg[nr].shift = (uint8_t)((off % 8) * 8);
			f->arg[nr].spill = (off % 8) * 8 + bits > 64;
			f->arg[nr].mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
			nr++;
			reg = -1;
			break;
		default: /* a read, a string, an immediate: the interpreter */
			return 0;
		}
	}
	if (nr != prog->nr_args)
		return 0;
	f->words = (uint8_t)((prog->fixed_size + 7) / 8);
	f->ret = first == 3;
	f->len = prog->fixed_size;
	f->nr = (uint8_t)nr;
	return 1;
}

/**
 * fdr_fetch_run - evaluate a checked program against a hit's registers
 * @prog: a program fdr_fetch_check() accepted (this very copy)
 * @regs: the registers of the hit (regs.h)
 * @out: the record buffer; bytes 0..7 (the common header) are left alone
 * @cap: bytes at @out; strings are cut to fit
 *
 * Writes __probe_ip (or __probe_func and __probe_ret_ip), every argument's
 * field, and the strings after the fixed part. Returns the record's length,
 * or -ENOSPC if @cap cannot hold the fixed part. Async-signal-safe; keeps errno.
 */
int fdr_fetch_run(const struct fdr_fetch_prog *prog, const struct fdr_probe_regs *regs, void *out,
		  size_t cap)
{
	unsigned char *rec = out;
	uint32_t i, dyn = prog->fixed_size, limit;
	uint64_t val = 0;
	int fault = 0;

	if (cap < prog->fixed_size)
		return -ENOSPC;
	limit = cap > 0xffff ? 0xffff : (uint32_t)cap; /* __data_loc offsets are 16 bits */
	if (prog->flags & FDR_FETCH_F_RETURN) {
		fr_put(rec + 8, regs->probe_addr, 8);
		fr_put(rec + 16, regs->gpr[FDR_REG_IP], 8);
	} else {
		fr_put(rec + 8, regs->gpr[FDR_REG_IP], 8);
	}
	for (i = 0; i < prog->nr_insns; i++) {
		const struct fdr_fetch_insn *in = &prog->insns[i];
		unsigned char *f = rec + in->field;
		uint32_t k, n;

		switch (in->op) {
		case FDR_FOP_REG:
			val = regs->gpr[in->imm];
			break;
		case FDR_FOP_STACK:
			val = fr_word(regs->gpr[FDR_REG_SP] + 8 * (uint64_t)in->imm, &fault);
			break;
		case FDR_FOP_STACKP:
			val = regs->gpr[FDR_REG_SP];
			break;
		case FDR_FOP_RETVAL:
			val = regs->gpr[FDR_REG_AX];
			break;
		case FDR_FOP_IMM:
			val = (uint64_t)in->imm;
			break;
		case FDR_FOP_FOFFS:
			/* the kernel's translate_user_vaddr(): probe address - its offset + imm */
			val = regs->probe_addr - prog->probe_offset + (uint64_t)in->imm;
			break;
		case FDR_FOP_ARG:
			if (in->imm <= 6)
				val = regs->gpr[fr_arg_regs[in->imm - 1]];
			else /* at function entry the return address is at sp */
				val = fr_word(regs->gpr[FDR_REG_SP] + 8 * (uint64_t)(in->imm - 6),
					      &fault);
			break;
		case FDR_FOP_DEREF:
			if (!fault)
				val = fr_word(val + (uint64_t)in->imm, &fault);
			break;
		case FDR_FOP_ST_RAW:
			fr_put(f, fault ? 0 : fr_bitfield(val, in), in->size);
			break;
		case FDR_FOP_ST_MEM:
			n = (uint32_t)in->size * in->count;
			if (fault || fdr_fetch_read_mem(f, val + (uint64_t)in->imm, n)) {
				fr_zero(f, n);
				break;
			}
			if (in->bf_width)
				for (k = 0; k < in->count; k++)
					fr_put(f + k * in->size,
					       fr_bitfield(fr_get(f + k * in->size, in->size), in),
					       in->size);
			break;
		case FDR_FOP_ST_STRING:
			n = fault ? 0 : fr_string(rec + dyn, val + (uint64_t)in->imm, limit - dyn);
			fr_put(f, (uint64_t)n << 16 | dyn, 4);
			dyn += n;
			break;
		case FDR_FOP_ST_COMM: {
			char comm[17] = { 0 };

			n = 0;
			if (fr_sys(SYS_prctl, PR_GET_NAME, (long)comm, 0, 0, 0, 0) == 0) {
				for (n = 0; n < 16 && comm[n]; n++) /* strnlen(), without libc */
					;
				n++;
				if (n > limit - dyn)
					n = limit - dyn;
				if (n) {
					fr_copy(rec + dyn, comm, n);
					rec[dyn + n - 1] = 0;
				}
			}
			fr_put(f, (uint64_t)n << 16 | dyn, 4);
			dyn += n;
			break;
		}
		default: { /* FDR_FOP_ST_DATA */
			const unsigned char *data =
				(const unsigned char *)&prog->insns[prog->nr_insns];
			uint32_t off = (uint32_t)((uint64_t)in->imm >> 16),
				 len = (uint32_t)(in->imm & 0xffff);

			n = len + 1 <= limit - dyn ? len + 1 : limit - dyn;
			if (n) {
				fr_copy(rec + dyn, data + off, n - 1);
				rec[dyn + n - 1] = 0;
			}
			fr_put(f, (uint64_t)n << 16 | dyn, 4);
			dyn += n;
			break;
		}
		}
		if (in->op >= FDR_FOP_ST_RAW)
			fault = 0; /* the next argument starts afresh */
	}
	return (int)dyn;
}
