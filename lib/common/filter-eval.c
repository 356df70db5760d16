// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * filter-eval.c - run a compiled filter on a record, and check a program.
 *
 * Design
 * ------
 * This is the writer's side: it runs inside traced applications for every
 * event that has a filter, possibly in a signal handler. So: no allocation,
 * no locks, no stdio, no recursion, errno untouched, and a bounded number of
 * steps. The program comes from shared memory, where anyone who can map the
 * session can scribble, so every read of it is checked before use:
 *
 *   header      struct_size, magic, version, nr_insns <= MAX, pool_len <= POOL,
 *               known flags, reserved 0
 *   each insn   jt and jf in (i, nr_insns + 1]: only forward, so at most
 *               nr_insns steps; op and src known; numeric size matches src
 *   operands    field bytes inside the record (offset + size <= len, and for
 *               __data_loc the offset/length word too); pool ranges inside
 *               pool_len; cpumask at most FDR_MAX_CPUS bits
 *
 * Each field of the program is read once, through FLT_ONCE(), into a local
 * that is checked and then used: a concurrent scribbler can make the answer
 * wrong but cannot move a read out of bounds. When a check fails the answer
 * is 1, "record the event": a broken filter loses nothing. The same checks on
 * the whole program are fdr_filter_validate(), which the control side runs
 * before it publishes a program and a writer may run when it adopts one; the
 * evaluator only sees the instructions its run visits.
 *
 *     i = 0
 *     while i < N:                 N = nr_insns; N means record, N + 1 discard
 *         r = predicate i on the record
 *         i = r ? jt[i] : jf[i]    always > i
 *     return i == N
 *
 * Speed. fdr_filter_eval() runs a one-predicate program on an integer field
 * (`status >= 500`) itself, with a switch on the source and one on the op and
 * no stack frame: 7 ns on the reference VM (bench/filter-bench.c, target 10).
 * Programs made only of such predicates run in flt_run_fast(); the first
 * other predicate (strings, CPUS{}, CPU, COMM) hands the rest of the run to
 * flt_run(), the general loop, which also serves fdr_filter_eval_visited().
 * The handovers are tail calls and re-read (and re-check) the header.
 * Strings: == and the '*'-at-the-ends forms are linear in the field; a
 * general glob is at most (field length + 1) * (pattern length + 1) steps,
 * pattern length <= 255, field length < 64 KiB.
 */
#include <errno.h>
#include <string.h>

#include "filter.h"

/* One read of shared memory; the compiler may not read it again. */
#define FLT_ONCE(x) (*(const volatile __typeof__(x) *)&(x))

#define FLT_SIGN (1ull << 63)

/* ---- strings ------------------------------------------------------------------------ */

/*
 * One pattern position against one character, for the glob: '?', a class
 * "[...]" / "[!...]" (']' first is literal, "a-z" ranges; an unterminated
 * class is a literal '['), "\x" (x literal), or a literal. Sets *next to the
 * pattern position after it.
 */
static int flt_glob_one(const char *pat, size_t plen, size_t p, unsigned char c, size_t *next)
{
	unsigned char pc = (unsigned char)pat[p];
	size_t q;
	int inv, match = 0;

	if (pc == '?') {
		*next = p + 1;
		return 1;
	}
	if (pc == '\\' && p + 1 < plen) {
		*next = p + 2;
		return (unsigned char)pat[p + 1] == c;
	}
	if (pc == '[') {
		q = p + 1;
		inv = q < plen && pat[q] == '!';
		q += (size_t)inv;
		/* the first character may be ']' */
		if (q < plen) {
			size_t first = q;

			while (q < plen && (q == first || pat[q] != ']')) {
				unsigned char a = (unsigned char)pat[q], b = a;

				if (q + 2 < plen && pat[q + 1] == '-' && pat[q + 2] != ']') {
					b = (unsigned char)pat[q + 2];
					q += 2;
				}
				if (a <= c && c <= b)
					match = 1;
				q++;
			}
			if (q < plen) {
				*next = q + 1;
				return match != inv;
			}
		}
		/* no closing ']': the '[' is a literal */
	}
	*next = p + 1;
	return pc == c;
}

/**
 * fdr_filter_glob_match - does @s match the glob @pat?
 * @pat: pattern bytes (not NUL-terminated): * ? [...] [!...] \x
 * @s: string bytes (not NUL-terminated)
 *
 * The kernel's glob_match() rules. Iterative with one backtrack point (the
 * last '*'), which is exact for these patterns: at most
 * (@slen + 1) * (@plen + 1) steps. Async-signal-safe.
 *
 * Returns: 1 on a match, else 0.
 */
int fdr_filter_glob_match(const char *pat, size_t plen, const char *s, size_t slen)
{
	size_t p = 0, i = 0, back_p = 0, back_i = 0, next;
	int have_back = 0;

	for (;;) {
		if (p < plen && pat[p] == '*') {
			back_p = ++p;
			back_i = i;
			have_back = 1;
			continue;
		}
		if (p < plen && i < slen &&
		    flt_glob_one(pat, plen, p, (unsigned char)s[i], &next)) {
			p = next;
			i++;
			continue;
		}
		if (p == plen && i == slen)
			return 1;
		/* mismatch: let the last '*' eat one more character */
		if (!have_back || back_i >= slen)
			return 0;
		p = back_p;
		i = ++back_i;
	}
}

static int flt_substr(const char *pat, size_t plen, const char *s, size_t slen)
{
	size_t i;

	if (!plen)
		return 1;
	if (plen > slen)
		return 0;
	for (i = 0; i + plen <= slen; i++) {
		const char *c = memchr(s + i, pat[0], slen - plen - i + 1);

		if (!c)
			return 0;
		i = (size_t)(c - s);
		if (memcmp(c, pat, plen) == 0)
			return 1;
	}
	return 0;
}

/* ---- one instruction ---------------------------------------------------------------- */

/* The field bytes of a string operand; 0, or -1 when they are not in the record. */
static inline int flt_string(unsigned src, uint32_t off, uint32_t size, const unsigned char *pl,
			     uint32_t len, const struct fdr_filter_ctx *ctx, const char **s,
			     size_t *n)
{
	uint32_t loc, doff, dlen;

	switch (src) {
	case FDR_FSRC_CHARS:
		if (off + size > len)
			return -1;
		*s = (const char *)pl + off;
		*n = strnlen(*s, size);
		return 0;
	case FDR_FSRC_DLOC:
		if (off + 4 > len)
			return -1;
		memcpy(&loc, pl + off, 4);
		doff = loc & 0xffff;
		dlen = loc >> 16;
		if (doff > len || dlen > len - doff)
			return -1;
		*s = (const char *)pl + doff;
		*n = strnlen(*s, dlen);
		return 0;
	case FDR_FSRC_TAIL:
		if (off > len)
			return -1;
		*s = (const char *)pl + off;
		*n = strnlen(*s, len - off);
		return 0;
	case FDR_FSRC_COMM:
		if (!ctx)
			return -1;
		*s = ctx->comm;
		*n = strnlen(ctx->comm, sizeof(ctx->comm));
		return 0;
	}
	return -1;
}

/* A string op; 0 or 1, or -1 when something does not check out. */
static int flt_string_op(unsigned op, unsigned src, uint32_t off, uint32_t size, uint64_t imm,
			 const struct fdr_filter_prog *p, uint32_t pool_len,
			 const unsigned char *pl, uint32_t len, const struct fdr_filter_ctx *ctx)
{
	uint32_t poff = (uint32_t)(imm & 0xffff), plen = (uint32_t)(imm >> 16);
	const char *pat = (const char *)p->pool + poff, *s;
	size_t n;

	if (plen > FDR_FILTER_MAX_STR || poff > pool_len || plen > pool_len - poff)
		return -1;
	if (flt_string(src, off, size, pl, len, ctx, &s, &n))
		return -1;
	switch (op) {
	case FDR_FOP_STR_EQ:
		return n == plen && memcmp(s, pat, n) == 0;
	case FDR_FOP_STR_PREFIX:
		return n >= plen && memcmp(s, pat, plen) == 0;
	case FDR_FOP_STR_SUFFIX:
		return n >= plen && memcmp(s + n - plen, pat, plen) == 0;
	case FDR_FOP_STR_SUBSTR:
		return flt_substr(pat, plen, s, n);
	case FDR_FOP_STR_GLOB:
		return fdr_filter_glob_match(pat, plen, s, n);
	}
	return -1;
}

/* Bytes of a numeric source, 0 for the others. */
static inline uint32_t flt_num_size(unsigned src)
{
	switch (src) {
	case FDR_FSRC_U8:
	case FDR_FSRC_S8:
		return 1;
	case FDR_FSRC_U16:
	case FDR_FSRC_S16:
		return 2;
	case FDR_FSRC_U32:
	case FDR_FSRC_S32:
	case FDR_FSRC_CPU:
		return 4;
	case FDR_FSRC_U64:
	case FDR_FSRC_S64:
		return 8;
	}
	return 0;
}

static inline int flt_is_signed(unsigned src)
{
	return src == FDR_FSRC_S8 || src == FDR_FSRC_S16 || src == FDR_FSRC_S32 ||
	       src == FDR_FSRC_S64 || src == FDR_FSRC_CPU;
}

/*
 * Checks of one instruction that need neither the record nor the context:
 * the evaluator makes them on each instruction it runs, validate on all.
 */
static inline int flt_insn_ok(unsigned op, unsigned src, uint32_t jt, uint32_t jf, uint32_t size,
			      uint32_t off, uint64_t imm, uint32_t i, uint32_t nr,
			      uint32_t pool_len)
{
	uint32_t poff = (uint32_t)(imm & 0xffff), plen = (uint32_t)((imm >> 16) & 0xffff);

	if (jt <= i || jt > nr + 1 || jf <= i || jf > nr + 1)
		return 0;
	switch (op) {
	case FDR_FOP_EQ:
	case FDR_FOP_LT:
	case FDR_FOP_GT:
	case FDR_FOP_BAND:
	case FDR_FOP_INMASK:
	case FDR_FOP_FALSE:
		if (!flt_num_size(src) || size != flt_num_size(src))
			return 0;
		if (src == FDR_FSRC_CPU && off)
			return 0;
		if (op == FDR_FOP_INMASK && ((imm >> 32) || !plen || plen > FDR_MAX_CPUS / 8 ||
					     poff > pool_len || plen > pool_len - poff))
			return 0;
		return 1;
	case FDR_FOP_STR_EQ:
	case FDR_FOP_STR_PREFIX:
	case FDR_FOP_STR_SUFFIX:
	case FDR_FOP_STR_SUBSTR:
	case FDR_FOP_STR_GLOB:
		if (src < FDR_FSRC_CHARS || src > FDR_FSRC_COMM)
			return 0;
		if ((imm >> 32) || plen > FDR_FILTER_MAX_STR || poff > pool_len ||
		    plen > pool_len - poff)
			return 0;
		if (src == FDR_FSRC_COMM && (off || size != FDR_COMM_LEN))
			return 0;
		return 1;
	}
	return 0;
}

/* ---- the loop ------------------------------------------------------------------------ */

/* Whole words of shared memory, read once each (FLT_ONCE) and then unpacked locally. */
typedef uint64_t __attribute__((may_alias)) flt_word;

struct flt_hdr {
	uint32_t struct_size, magic;
	uint16_t version, nr_insns, pool_len, flags;
	uint32_t event_id, reserved;
};
_Static_assert(sizeof(struct flt_hdr) == 24, "the header's first three words");

/* One read of an instruction into @in, whatever a writer does meanwhile. */
static inline void flt_load_insn(const struct fdr_filter_insn *src, struct fdr_filter_insn *in)
{
	uint64_t w[2];

	w[0] = FLT_ONCE(((const flt_word *)src)[0]);
	w[1] = FLT_ONCE(((const flt_word *)src)[1]);
	memcpy(in, w, sizeof(w));
}

/*
 * The header: 0 and its fields, or -1 when it does not check out. One branch
 * per check: measurably cheaper than folding them with '|' (7.35 -> 6.75 ns
 * for `status >= 500`).
 */
static inline int flt_header(const struct fdr_filter_prog *p, uint32_t *nr, uint32_t *pool_len,
			     uint32_t *flags)
{
	struct flt_hdr h;
	uint64_t w[3];

	w[0] = FLT_ONCE(((const flt_word *)p)[0]);
	w[1] = FLT_ONCE(((const flt_word *)p)[1]);
	w[2] = FLT_ONCE(((const flt_word *)p)[2]);
	memcpy(&h, w, sizeof(h));
	if (__builtin_expect(h.struct_size != FDR_FILTER_PROG_SIZE, 0))
		return -1;
	if (__builtin_expect(h.magic != FDR_FILTER_MAGIC, 0))
		return -1;
	if (__builtin_expect(h.version != FDR_FILTER_VERSION, 0))
		return -1;
	if (__builtin_expect(h.nr_insns > FDR_FILTER_MAX_INSNS, 0))
		return -1;
	if (__builtin_expect(h.pool_len > FDR_FILTER_POOL_SIZE, 0))
		return -1;
	if (__builtin_expect(h.flags > FDR_FILTER_F_ALL, 0))
		return -1;
	if (__builtin_expect(h.reserved != 0, 0))
		return -1;
	*nr = h.nr_insns;
	*pool_len = h.pool_len;
	*flags = h.flags;
	return 0;
}

/* One instruction of any kind: 0 or 1, or -1 when something does not check out. */
static inline int flt_insn(const struct fdr_filter_prog *p, const struct fdr_filter_insn *in,
			   uint32_t i, uint32_t nr, uint32_t pool_len, uint32_t flags,
			   const unsigned char *pl, uint32_t len, const struct fdr_filter_ctx *ctx)
{
	uint32_t off = in->off, size = in->size, src = in->src, op = in->op;
	uint64_t imm = in->imm, v, bias;

	if (!flt_insn_ok(op, src, in->jt, in->jf, size, off, imm, i, nr, pool_len))
		return -1;
	if (op >= FDR_FOP_STR_EQ) {
		if (src == FDR_FSRC_COMM && !(flags & FDR_FILTER_F_COMM))
			return -1;
		return flt_string_op(op, src, off, size, imm, p, pool_len, pl, len, ctx);
	}
	if (src == FDR_FSRC_CPU) {
		if (!ctx || !(flags & FDR_FILTER_F_CPU))
			return -1;
		v = (uint64_t)(int64_t)(int32_t)ctx->cpu;
	} else {
		uint16_t u16;
		uint32_t u32;

		if (off + size > len)
			return -1;
		switch (size) {
		case 1:
			v = pl[off];
			break;
		case 2:
			memcpy(&u16, pl + off, 2);
			v = u16;
			break;
		case 4:
			memcpy(&u32, pl + off, 4);
			v = u32;
			break;
		default:
			memcpy(&v, pl + off, 8);
			break;
		}
		if (flt_is_signed(src) && size < 8 && (v >> (size * 8 - 1)))
			v |= ~0ull << (size * 8);
	}
	bias = flt_is_signed(src) ? FLT_SIGN : 0;
	switch (op) {
	case FDR_FOP_EQ:
		return v == imm;
	case FDR_FOP_LT:
		return (v ^ bias) < (imm ^ bias);
	case FDR_FOP_GT:
		return (v ^ bias) > (imm ^ bias);
	case FDR_FOP_BAND:
		return (v & imm) != 0;
	case FDR_FOP_INMASK: {
		uint32_t moff = (uint32_t)(imm & 0xffff), mlen = (uint32_t)(imm >> 16);

		/* a CPU number is unsigned: the kernel reads it so */
		if (bias)
			v &= 0xffffffffu;
		return v < (uint64_t)mlen * 8 && (FLT_ONCE(p->pool[moff + v / 8]) >> (v % 8)) & 1;
	}
	}
	return 0; /* FDR_FOP_FALSE */
}

/*
 * The general loop, from instruction @i on: every kind of instruction, and
 * the visited marks. Reads the header again (and checks it again) so that
 * the fast loop can hand over with six arguments, as a tail call.
 */
static __attribute__((noinline)) int flt_run(const struct fdr_filter_prog *p,
					     const unsigned char *pl, uint32_t len,
					     const struct fdr_filter_ctx *ctx, uint8_t *visited,
					     uint32_t i)
{
	uint32_t nr, pool_len, flags;

	if (flt_header(p, &nr, &pool_len, &flags))
		return 1;
	while (i < nr) {
		struct fdr_filter_insn in;
		int r;

		flt_load_insn(&p->insns[i], &in);
		r = flt_insn(p, &in, i, nr, pool_len, flags, pl, len, ctx);
		if (r < 0)
			return 1;
		if (visited)
			visited[i] = 1;
		i = r ? in.jt : in.jf;
	}
	return i == nr;
}

/*
 * The common case: an integer field (U8..S64: odd sources unsigned, even ones
 * signed, width 1 << ((src - 1) / 2)) compared with ==, <, > or &, with that
 * case's share of flt_insn_ok()'s checks written out (the caller checks the
 * jumps). Returns 0 or 1; FLT_NOT_FAST for any other instruction, FLT_BAD
 * when this one does not check out.
 */
#define FLT_NOT_FAST (-1)
#define FLT_BAD (-2)

/* jt if @r, else jf, without a branch: records pass 500s at random */
static inline uint32_t flt_next(const struct fdr_filter_insn *in, int r)
{
	uint32_t jt = in->jt, jf = in->jf;

	return jf ^ ((jt ^ jf) & (0u - (uint32_t)r));
}

static inline __attribute__((always_inline)) int
flt_fast_insn(const struct fdr_filter_insn *in, const unsigned char *payload, uint32_t len)
{
	uint32_t src = in->src, width, off = in->off;
	uint64_t v, bias;

	if (__builtin_expect(in->op - 1u > FDR_FOP_BAND - 1u || src - 1u > FDR_FSRC_S64 - 1u, 0))
		return FLT_NOT_FAST;
	width = 1u << ((src - 1) >> 1);
	if ((in->size != width) | (off + width > len))
		return FLT_BAD;
	/* signed: sign-extended, and compared as unsigned with the sign bit flipped */
	bias = src & 1 ? 0 : FLT_SIGN;
	switch (src) {
	case FDR_FSRC_U8:
		v = payload[off];
		break;
	case FDR_FSRC_S8:
		v = (uint64_t)(int64_t)(int8_t)payload[off];
		break;
	case FDR_FSRC_U16: {
		uint16_t x;

		memcpy(&x, payload + off, 2);
		v = x;
		break;
	}
	case FDR_FSRC_S16: {
		int16_t x;

		memcpy(&x, payload + off, 2);
		v = (uint64_t)(int64_t)x;
		break;
	}
	case FDR_FSRC_U32: {
		uint32_t x;

		memcpy(&x, payload + off, 4);
		v = x;
		break;
	}
	case FDR_FSRC_S32: {
		int32_t x;

		memcpy(&x, payload + off, 4);
		v = (uint64_t)(int64_t)x;
		break;
	}
	default: /* U64, S64 */
		memcpy(&v, payload + off, 8);
		break;
	}
	switch (in->op) {
	case FDR_FOP_EQ:
		return v == in->imm;
	case FDR_FOP_LT:
		return (v ^ bias) < (in->imm ^ bias);
	case FDR_FOP_GT:
		return (v ^ bias) > (in->imm ^ bias);
	}
	return (v & in->imm) != 0; /* FDR_FOP_BAND */
}

/* Programs of several instructions: the fast ones here, the others in flt_run(). */
static __attribute__((noinline)) int flt_run_fast(const struct fdr_filter_prog *p,
						  const unsigned char *payload, uint32_t len,
						  const struct fdr_filter_ctx *ctx)
{
	uint32_t nr, pool_len, flags, i = 0;

	if (flt_header(p, &nr, &pool_len, &flags))
		return 1;
	while (i < nr) {
		struct fdr_filter_insn in;
		int r;

		flt_load_insn(&p->insns[i], &in);
		/* jumps go forward, at most to "discard" (nr + 1) */
		if (((uint32_t)in.jt - i - 1 > nr - i) | ((uint32_t)in.jf - i - 1 > nr - i))
			return 1;
		r = flt_fast_insn(&in, payload, len);
		if (r == FLT_NOT_FAST)
			return flt_run(p, payload, len, ctx, NULL, i);
		if (r < 0)
			return 1;
		i = flt_next(&in, r);
	}
	return i == nr;
}

/**
 * fdr_filter_eval - run a filter on one record
 * @p: the program (shared memory: read as hostile); NULL records everything
 * @payload: the record's payload, common header included
 * @len: its length in bytes
 * @ctx: the writer's CPU and thread name; may be NULL when @p's flags say the
 *       program reads neither
 *
 * For the event path: async-signal-safe, no allocation, no locks, errno
 * untouched, at most nr_insns predicates.
 *
 * Three speeds: a one-predicate program comparing an integer field (`status
 * >= 500`) is evaluated right here, without a stack frame; programs of such
 * predicates go through flt_run_fast(); strings, masks and the pseudo-fields
 * through flt_run(). Each hands over to the next as a tail call.
 *
 * Returns: 1 to record the event, 0 to discard it. 1 also whenever the
 * program, or the part of the record it reads, does not check out.
 */
int fdr_filter_eval(const struct fdr_filter_prog *p, const unsigned char *payload, uint32_t len,
		    const struct fdr_filter_ctx *ctx)
{
	uint32_t nr, pool_len, flags;
	struct fdr_filter_insn in;
	int r;

	if (!p || flt_header(p, &nr, &pool_len, &flags))
		return 1;
	if (!payload)
		len = 0;
	if (nr != 1)
		return nr ? flt_run_fast(p, payload, len, ctx) : 1;
	flt_load_insn(&p->insns[0], &in);
	/* jt and jf: 1 (record) or 2 (discard) */
	if ((in.jt - 1u > 1) | (in.jf - 1u > 1))
		return 1;
	r = flt_fast_insn(&in, payload, len);
	if (r == FLT_NOT_FAST)
		return flt_run(p, payload, len, ctx, NULL, 0);
	if (r < 0)
		return 1;
	return flt_next(&in, r) == 1;
}

/**
 * fdr_filter_eval_visited - fdr_filter_eval() that also marks what it ran
 * @visited: FDR_FILTER_MAX_INSNS bytes, zeroed by the caller; visited[i] is set
 *           to 1 when predicate i (the i-th in the text) was evaluated
 *
 * For tests of the short-circuit and for debugging. Returns as fdr_filter_eval().
 */
int fdr_filter_eval_visited(const struct fdr_filter_prog *p, const unsigned char *payload,
			    uint32_t len, const struct fdr_filter_ctx *ctx, uint8_t *visited)
{
	if (!p)
		return 1;
	return flt_run(p, payload ? payload : NULL, payload ? len : 0, ctx, visited, 0);
}

/**
 * fdr_filter_validate - check a whole program
 * @p: the program (read as hostile)
 *
 * The header checks fdr_filter_eval() makes, and the checks it makes on each
 * instruction it runs, made on all nr_insns of them: a program that passes
 * evaluates without meeting a failing check, except those on the record
 * itself, and one that fails evaluates to 1 as soon as the run reaches the
 * defect (a run that never reaches it cannot see it). Also checks that the
 * flags name every context field the program reads, so a writer may skip
 * filling what the flags omit. Async-signal-safe; O(nr_insns).
 *
 * Returns: 0 if @p is safe and meaningful to run, else -EINVAL (-EPROTO for
 * another version of the format).
 */
int fdr_filter_validate(const struct fdr_filter_prog *p)
{
	uint32_t nr, pool_len, i, flags, need = 0;

	if (!p)
		return -EINVAL;
	if (FLT_ONCE(p->struct_size) != FDR_FILTER_PROG_SIZE ||
	    FLT_ONCE(p->magic) != FDR_FILTER_MAGIC)
		return -EINVAL;
	if (FLT_ONCE(p->version) != FDR_FILTER_VERSION)
		return -EPROTO;
	nr = FLT_ONCE(p->nr_insns);
	pool_len = FLT_ONCE(p->pool_len);
	flags = FLT_ONCE(p->flags);
	if (nr > FDR_FILTER_MAX_INSNS || pool_len > FDR_FILTER_POOL_SIZE ||
	    (flags & ~FDR_FILTER_F_ALL) || FLT_ONCE(p->reserved))
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		const struct fdr_filter_insn *in = &p->insns[i];
		unsigned op = FLT_ONCE(in->op), src = FLT_ONCE(in->src);
		uint32_t jt = FLT_ONCE(in->jt), jf = FLT_ONCE(in->jf);
		uint32_t off = FLT_ONCE(in->off), size = FLT_ONCE(in->size);
		uint64_t imm = FLT_ONCE(in->imm);

		if (!flt_insn_ok(op, src, jt, jf, size, off, imm, i, nr, pool_len))
			return -EINVAL;
		if (src == FDR_FSRC_CPU)
			need |= FDR_FILTER_F_CPU;
		if (src == FDR_FSRC_COMM)
			need |= FDR_FILTER_F_COMM;
	}
	if (need & ~flags)
		return -EINVAL;
	return 0;
}
