/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * filter.h - event filters (docs/tracefs.md, Filters): the compiled program, the
 * compiler, the evaluator and the kernel-style error text.
 *
 * A filter is compiled once, by whoever writes the `filter` (or trigger) file,
 * into a struct fdr_filter_prog: one fixed-size block without pointers, meant
 * to be copied into shared memory and run by the writer inside each traced
 * application. The program is a list of predicates, each with the index of
 * the next predicate to run when it is true (jt) and when it is false (jf);
 * index nr_insns means "record", nr_insns + 1 "discard". Targets only go
 * forward, so a run takes at most nr_insns steps. See docs/design/filter.md.
 *
 * Readers of a program treat it as hostile: fdr_filter_validate() checks all of
 * it, and fdr_filter_eval() checks what it touches and answers 1 (record the
 * event) whenever something does not check out.
 */
#ifndef FDR_COMMON_FILTER_H
#define FDR_COMMON_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "fdr/fdr-abi.h"

#define FDR_FILTER_MAGIC 0x544c4946u /* "FILT" */
#define FDR_FILTER_VERSION 1
#define FDR_FILTER_PROG_SIZE 4096
#define FDR_FILTER_MAX_INSNS 128 /* predicates per filter */
#define FDR_FILTER_HDR_SIZE 32
#define FDR_FILTER_POOL_SIZE                          \
	(FDR_FILTER_PROG_SIZE - FDR_FILTER_HDR_SIZE - \
	 FDR_FILTER_MAX_INSNS * (int)sizeof(struct fdr_filter_insn))
#define FDR_FILTER_MAX_STR 255 /* longest quoted operand (the kernel's MAX_FILTER_STR_VAL - 1) */
#define FDR_FILTER_MAX_DEPTH 256 /* nested '(' the compiler accepts */

/* fdr_filter_compile() returns this for "0": remove the filter. */
#define FDR_FILTER_CLEAR 1

/* struct fdr_filter_prog.flags: what the program needs from struct fdr_filter_ctx */
#define FDR_FILTER_F_CPU 0x1u
#define FDR_FILTER_F_COMM 0x2u
#define FDR_FILTER_F_ALL (FDR_FILTER_F_CPU | FDR_FILTER_F_COMM)

/*
 * struct fdr_filter_insn.op. Numeric ops compare the operand with imm (NE, LE
 * and GE do not exist: they are EQ, GT and LT with jt and jf swapped). String
 * ops compare the operand with the pattern in the pool; the compiler picks the
 * cheapest one that gives the glob's answer.
 */
enum fdr_filter_op {
	FDR_FOP_EQ = 1, /* v == imm */
	FDR_FOP_LT = 2, /* v < imm, signed or not as the source */
	FDR_FOP_GT = 3, /* v > imm */
	FDR_FOP_BAND = 4, /* (v & imm) != 0 */
	FDR_FOP_INMASK = 5, /* bit v of the cpumask in the pool is set (v unsigned) */
	FDR_FOP_FALSE = 6, /* constant false (CPU == CPUS{more than one}) */
	FDR_FOP_STR_EQ = 7, /* s == pattern */
	FDR_FOP_STR_PREFIX = 8, /* s starts with pattern ("abc*") */
	FDR_FOP_STR_SUFFIX = 9, /* s ends with pattern ("*abc") */
	FDR_FOP_STR_SUBSTR = 10, /* s contains pattern ("*abc*") */
	FDR_FOP_STR_GLOB = 11, /* glob: * ? [...] [!...] \x */
	FDR_FOP_NR
};

/* struct fdr_filter_insn.src: where the operand comes from */
enum fdr_filter_src {
	FDR_FSRC_U8 = 1, /* numeric fields: payload[off], size bytes */
	FDR_FSRC_S8 = 2,
	FDR_FSRC_U16 = 3,
	FDR_FSRC_S16 = 4,
	FDR_FSRC_U32 = 5,
	FDR_FSRC_S32 = 6,
	FDR_FSRC_U64 = 7,
	FDR_FSRC_S64 = 8,
	FDR_FSRC_CPU = 9, /* ctx->cpu, as an int (the kernel's CPU field) */
	FDR_FSRC_CHARS = 10, /* char[size] at off, NUL-padded */
	FDR_FSRC_DLOC = 11, /* __data_loc at off: u32 (len << 16 | offset) */
	FDR_FSRC_TAIL = 12, /* from off to the end of the record (ftrace:print buf) */
	FDR_FSRC_COMM = 13, /* ctx->comm */
	FDR_FSRC_NR
};

/*
 * One predicate, 16 bytes. Strings and cpumasks live in the pool: imm holds
 * their pool offset (bits 0-15) and length in bytes (bits 16-31).
 */
struct fdr_filter_insn {
	uint8_t op; /* enum fdr_filter_op */
	uint8_t src; /* enum fdr_filter_src */
	uint8_t jt; /* next insn when true: > this index, <= nr_insns + 1 */
	uint8_t jf; /* next insn when false */
	uint16_t off; /* payload offset of the field */
	uint16_t size; /* field size in bytes (numeric: 1, 2, 4, 8; CHARS: array length) */
	uint64_t imm; /* numeric: the constant, sign-extended; else pool offset | len << 16 */
};
_Static_assert(sizeof(struct fdr_filter_insn) == 16, "fdr_filter_insn layout");

struct fdr_filter_prog {
	uint32_t struct_size; /* FDR_FILTER_PROG_SIZE */
	uint32_t magic; /* FDR_FILTER_MAGIC */
	uint16_t version; /* FDR_FILTER_VERSION */
	uint16_t nr_insns; /* 0: every record matches */
	uint16_t pool_len; /* bytes of pool[] in use */
	uint16_t flags; /* FDR_FILTER_F_*: the ctx fields the program reads */
	uint32_t event_id; /* the event it was compiled for (0: none given) */
	uint32_t reserved; /* 0 */
	uint64_t layout_hash; /* that event's layout_hash: the field offsets depend on it */
	struct fdr_filter_insn insns[FDR_FILTER_MAX_INSNS];
	uint8_t pool[FDR_FILTER_POOL_SIZE];
};
_Static_assert(sizeof(struct fdr_filter_prog) == FDR_FILTER_PROG_SIZE, "fdr_filter_prog size");
_Static_assert(offsetof(struct fdr_filter_prog, insns) == FDR_FILTER_HDR_SIZE, "fdr_filter_prog");

/* What the writer knows besides the payload. */
struct fdr_filter_ctx {
	uint32_t cpu; /* the CPU the writer runs on */
	char comm[FDR_COMM_LEN]; /* the writer thread's name, NUL-padded */
};

/*
 * Parse errors: the kernel's table, same order, same text
 * (kernel/trace/trace_events_filter.c ERRORS), so the codes are the kernel's;
 * fdr's own codes come after them.
 */
#define FDR_FILTER_ERRORS                                                                 \
	C(NONE, "No error")                                                               \
	C(INVALID_OP, "Invalid operator")                                                 \
	C(TOO_MANY_OPEN, "Too many '('")                                                  \
	C(TOO_MANY_CLOSE, "Too few '('")                                                  \
	C(MISSING_QUOTE, "Missing matching quote")                                        \
	C(MISSING_BRACE_OPEN, "Missing '{'")                                              \
	C(MISSING_BRACE_CLOSE, "Missing '}'")                                             \
	C(OPERAND_TOO_LONG, "Operand too long")                                           \
	C(EXPECT_STRING, "Expecting string field")                                        \
	C(EXPECT_DIGIT, "Expecting numeric field")                                        \
	C(ILLEGAL_FIELD_OP, "Illegal operation for field type")                           \
	C(FIELD_NOT_FOUND, "Field not found")                                             \
	C(ILLEGAL_INTVAL, "Illegal integer value")                                        \
	C(BAD_SUBSYS_FILTER, "Couldn't find or set field in one of a subsystem's events") \
	C(TOO_MANY_PREDS, "Too many terms in predicate expression")                       \
	C(INVALID_FILTER, "Meaningless filter expression")                                \
	C(INVALID_CPULIST, "Invalid cpulist")                                             \
	C(IP_FIELD_ONLY, "Only 'ip' field is supported for function trace")               \
	C(INVALID_VALUE, "Invalid value (did you forget quotes)?")                        \
	C(NO_FUNCTION, "Function not found")                                              \
	C(ERRNO, "Error")                                                                 \
	C(NO_FILTER, "No filter found")                                                   \
	C(BAD_CHAR, "Unexpected character") /* fdr: a control byte outside quotes */

#define C(a, b) FDR_FILTER_ERR_##a,
enum fdr_filter_err { FDR_FILTER_ERRORS FDR_FILTER_ERR_NR };
#undef C

/*
 * Where compiling failed. code 0 (NONE) is the kernel's "nothing to parse"
 * case (empty or blank text, "()"): the filter file then shows "Error: (0)" and
 * error_log says "Error". pos is the kernel's lasterr_pos: a byte offset into
 * the text (for errors inside a predicate, one past the byte the parser stood
 * on, as the kernel reports them); the caret goes under min(pos, trimmed length).
 */
struct fdr_filter_error {
	int code; /* enum fdr_filter_err */
	int pos;
	int ch; /* FDR_FILTER_ERR_BAD_CHAR: the byte found at pos */
};

int fdr_filter_compile(const struct fdr_abi_event *e, const char *text, struct fdr_filter_prog *out,
		       struct fdr_filter_error *err);
void fdr_filter_init(struct fdr_filter_prog *p);
int fdr_filter_validate(const struct fdr_filter_prog *p);
int fdr_filter_eval(const struct fdr_filter_prog *p, const unsigned char *payload, uint32_t len,
		    const struct fdr_filter_ctx *ctx);
int fdr_filter_eval_visited(const struct fdr_filter_prog *p, const unsigned char *payload,
			    uint32_t len, const struct fdr_filter_ctx *ctx, uint8_t *visited);
int fdr_filter_glob_match(const char *pat, size_t plen, const char *s, size_t slen);

const char *fdr_filter_strerror(int code);
const char *fdr_filter_error_message(const struct fdr_filter_error *err);
size_t fdr_filter_text_len(const char *text);
int fdr_filter_format_text(const char *text, char *buf, size_t size);
int fdr_filter_format_error(const char *text, const struct fdr_filter_error *err, char *buf,
			    size_t size);
int fdr_filter_dump(const struct fdr_filter_prog *p, char *buf, size_t size);

#endif /* FDR_COMMON_FILTER_H */
