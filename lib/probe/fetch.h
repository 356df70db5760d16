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

int fdr_fetch_check(const struct fdr_fetch_prog *prog, size_t len, const char **why);
int fdr_fetch_run(const struct fdr_fetch_prog *prog, const struct fdr_probe_regs *regs, void *out,
		  size_t cap);

/* How user memory is read (FDR_FETCH_READ_*), for tests and measurement. */
enum fdr_fetch_read_mode { FDR_FETCH_READ_AUTO, FDR_FETCH_READ_VM, FDR_FETCH_READ_PIPE };
void fdr_fetch_set_read_mode(enum fdr_fetch_read_mode m);
int fdr_fetch_read_mem(void *dst, uint64_t addr, size_t n);

#endif
