/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fetch.h - compiled fetch programs of dynamic probes (docs/design/uprobes.md).
 *
 * The control side (lib/ctl/uprobe-parse.c) compiles the FETCHARGS of one
 * uprobe_events line into one struct fdr_fetch_prog; traced processes run it
 * on each hit (fetch.c, libc only, async-signal-safe). A program lives in
 * shared memory that any process of the user can write, so it holds no
 * pointer, only offsets, and fdr_fetch_check() bounds every field of a private
 * copy before fdr_fetch_run() is given it.
 *
 * Layout: the header, nr_insns instructions, then data_len bytes of immediate
 * strings (\"STR" arguments). Each argument is a run of load instructions that
 * compute a value (a register, an address...), ended by one store instruction
 * that writes the argument's field of the record.
 */
#ifndef FDR_PROBE_FETCH_H
#define FDR_PROBE_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "probe/regs.h"

#define FDR_FETCH_MAGIC 0x48435446u /* "FTCH" */
#define FDR_FETCH_VERSION 1
#define FDR_FETCH_MAX_ARGS 128 /* the kernel's MAX_TRACE_ARGS */
#define FDR_FETCH_MAX_ARRAY 64 /* the kernel's MAX_ARRAY_LEN */
#define FDR_FETCH_MAX_INSNS 2048 /* 128 arguments of at most 16 instructions */
#define FDR_FETCH_MAX_DEPTH 15 /* loads before a store */
#define FDR_FETCH_MAX_SIZE 65536 /* bytes of a whole program */
#define FDR_FETCH_MAX_RECORD 4000 /* = FDR_MAX_RECORD (fdr.h) */
#define FDR_FETCH_FAULT_STR "(fault)"

enum fdr_fetch_op {
	/* loads: set the value */
	FDR_FOP_REG = 1, /* imm: enum fdr_reg */
	FDR_FOP_STACK, /* imm: N, the word at sp + 8 * N */
	FDR_FOP_STACKP, /* sp */
	FDR_FOP_RETVAL, /* ax, return probes only */
	FDR_FOP_IMM, /* imm */
	FDR_FOP_FOFFS, /* imm: a file offset of the probed file, made an address */
	FDR_FOP_ARG, /* imm: N >= 1, the System V argument (fdr's $argN) */
	FDR_FOP_DEREF, /* imm: signed offset; the value becomes the u64 at value + imm */
	/* stores: end an argument, write its field at .field */
	FDR_FOP_ST_RAW, /* the value itself, .size bytes (bitfield applied) */
	FDR_FOP_ST_MEM, /* .count elements of .size bytes at value + imm */
	FDR_FOP_ST_STRING, /* the NUL-terminated string at value + imm */
	FDR_FOP_ST_COMM, /* the thread's name */
	FDR_FOP_ST_DATA, /* an immediate string: imm = offset in data << 16 | length */
	FDR_FOP_NR
};

struct fdr_fetch_insn {
	uint8_t op; /* enum fdr_fetch_op */
	uint8_t size; /* stores: element bytes, 1, 2, 4 or 8 (4 for strings: the data_loc) */
	uint8_t count; /* stores: elements, 1 for a scalar, at most FDR_FETCH_MAX_ARRAY */
	uint8_t bf_width; /* ST_RAW, ST_MEM: bitfield width in bits, 0 = none */
	uint8_t bf_offset; /* bit offset of the bitfield in its container */
	uint8_t reserved;
	uint16_t field; /* stores: offset of the argument's field in the record */
	int64_t imm;
};
_Static_assert(sizeof(struct fdr_fetch_insn) == 16, "fdr_fetch_insn layout");

/* struct fdr_fetch_prog.flags */
#define FDR_FETCH_F_RETURN 1u /* return probe: __probe_func, __probe_ret_ip */

struct fdr_fetch_prog {
	uint32_t magic; /* FDR_FETCH_MAGIC */
	uint16_t version; /* FDR_FETCH_VERSION */
	uint16_t flags; /* FDR_FETCH_F_* */
	uint32_t size; /* bytes: header + insns + data */
	uint16_t nr_insns;
	uint16_t nr_args;
	uint16_t fixed_size; /* record bytes at fixed offsets, the 8-byte common header included */
	uint16_t data_len; /* immediate string bytes after the instructions */
	uint32_t reserved;
	uint64_t probe_offset; /* file offset of the probe in its file (@+OFFSET) */
	struct fdr_fetch_insn insns[];
};
_Static_assert(sizeof(struct fdr_fetch_prog) == 32, "fdr_fetch_prog layout");

/* Bytes of a program of @nr_insns instructions and @data_len bytes of data. */
static inline size_t fdr_fetch_prog_bytes(size_t nr_insns, size_t data_len)
{
	return sizeof(struct fdr_fetch_prog) + nr_insns * sizeof(struct fdr_fetch_insn) + data_len;
}

/*
 * A program whose arguments are all registers stored whole (%di, $arg1..6,
 * $retval, $stack; no memory, no string, no bitfield), with a fixed part of
 * at most FDR_FETCH_FAST_WORDS words, also runs as a table
 * (fdr_fetch_fast_make() builds it from the checked program): each word of
 * the record after the common header is put together in a register (a field
 * packed across two words goes half in each) and written with one 8-byte
 * store, its padding zeroed. The hit's
 * record is then read back in 8-byte words (the ring's copy) with each load
 * forwarded from one store; a 4-byte field and the padding stored after it
 * cannot be forwarded to one load, which waits for both to reach the cache.
 */
#define FDR_FETCH_FAST_ARGS 8
#define FDR_FETCH_FAST_WORDS 16

struct fdr_fetch_fast {
	uint8_t nr; /* arguments; 0: the program does not run this way */
	uint8_t words; /* 8-byte words of the fixed part, padding included */
	uint8_t ret; /* a return probe: __probe_func and __probe_ret_ip */
	uint8_t reserved;
	uint16_t len; /* the record's length (the program's fixed_size) */
	struct {
		uint64_t mask; /* the field's bits of the register, before the shift */
		uint8_t reg; /* index in struct fdr_probe_regs, as 64-bit words */
		uint8_t word; /* the record's word, >= 2 (3 for a return probe) */
		uint8_t shift; /* bits: the field's offset in its word */
		uint8_t spill; /* 1: its high bits go on in the next word */
	} arg[FDR_FETCH_FAST_ARGS];
};

int fdr_fetch_fast_make(const struct fdr_fetch_prog *prog, struct fdr_fetch_fast *f);

/*
 * fdr_fetch_fast_run - what fdr_fetch_run() writes, for a program @f was made
 * from (f->nr > 0), into @out (8-byte aligned, f->words words; word 0, the
 * common header, is left alone), with the padding after the last field zeroed.
 * Returns the record's length.
 */
static inline __attribute__((always_inline)) int
fdr_fetch_fast_run(const struct fdr_fetch_fast *f, const struct fdr_probe_regs *regs, void *out)
{
	const uint64_t *r = (const uint64_t *)regs;
	uint64_t *o = out, v = 0;
	unsigned int i, k;

	_Static_assert(sizeof(struct fdr_probe_regs) == (FDR_REG_NR + 1) * 8, "regs as words");
	if (f->ret) {
		o[1] = regs->probe_addr;
		o[2] = regs->gpr[FDR_REG_IP];
	} else {
		o[1] = regs->gpr[FDR_REG_IP];
	}
	k = 2u + f->ret; /* the first word after __probe_ip (or __probe_ret_ip) */
	for (i = 0; i < f->nr; i++) {
		uint64_t x = r[f->arg[i].reg] & f->arg[i].mask;

		while (k < f->arg[i].word) { /* a word with no field (more) in it */
			o[k++] = v;
			v = 0;
			__asm__("" ::: "memory"); /* no memset() (clang), as below */
		}
		v |= x << f->arg[i].shift;
		if (f->arg[i].spill) { /* shift > 0: the field is wider than what is left */
			o[k++] = v;
			v = x >> (64 - f->arg[i].shift);
		}
	}
	o[k++] = v;
	for (; k < f->words; k++) {
		o[k] = 0;
		__asm__("" ::: "memory"); /* not a memset() call (clang): a hit calls no libc */
	}
	return f->len;
}

int fdr_fetch_check(const struct fdr_fetch_prog *prog, size_t len, const char **why);
int fdr_fetch_run(const struct fdr_fetch_prog *prog, const struct fdr_probe_regs *regs, void *out,
		  size_t cap);

/* How user memory is read (FDR_FETCH_READ_*), for tests and measurement. */
enum fdr_fetch_read_mode { FDR_FETCH_READ_AUTO, FDR_FETCH_READ_VM, FDR_FETCH_READ_PIPE };
void fdr_fetch_set_read_mode(enum fdr_fetch_read_mode m);
int fdr_fetch_read_mem(void *dst, uint64_t addr, size_t n);

#endif
