// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * filter-parse.c - compile a filter expression (docs/tracefs.md, Filters) into a
 * struct fdr_filter_prog.
 *
 * Design
 * ------
 * The writer runs filters inside traced applications, so the compiled form is
 * made for the evaluator: a flat list of predicates in the order they appear in
 * the text, each with two forward jumps, jt (taken when the predicate is true)
 * and jf (when false). Index N (= nr_insns) means "record", N + 1 "discard".
 * && / || / ! and the parentheses disappear into the jumps. For
 *
 *     a && !(b || c) || d
 *
 * the tree is OR(AND(a, NOT(OR(b, c))), d) and the program is
 *
 *     0: a    jt 1  jf 3         a false: the && fails, try d
 *     1: b    jt 3  jf 2         b true: !(b || c) is false, try d
 *     2: c    jt 3  jf 4         c false: !(b || c) is true, record
 *     3: d    jt 4  jf 5
 *     4: record   5: discard
 *
 * Code generation is top-down: gen(node, T, F) gives a leaf jt = T, jf = F;
 * AND(x, y) is gen(x, first(y), F) + gen(y, T, F); OR(x, y) is
 * gen(x, T, first(y)) + gen(y, T, F); NOT swaps T and F. first(y) is the
 * index of y's leftmost predicate, and leaves keep their text order, so every
 * jump goes forward: a run visits each predicate at most once and the
 * short-circuit of && and || falls out of the jumps (this is the program the
 * kernel gets after its three passes in predicate_parse()).
 *
 * Parsing is the kernel's, position for position, because users (and tests)
 * compare the caret with the kernel's:
 *   1. fp_scan() is calc_stack(): quotes and parentheses first, so "Missing
 *      matching quote", "Too many '('" and "Too few '('" win over anything
 *      else and point where the kernel points.
 *   2. fp_parse() walks the text once with an explicit operator stack
 *      (shunting-yard, no recursion, so a hostile text cannot exhaust the
 *      stack): '(' and '!' before an operand, a predicate, then ')' '&&' '||'
 *      or the end. Anything else after a predicate is "Too many terms".
 *   3. fp_pred() is parse_pred(): FIELD OP VALUE. Its error positions are the
 *      kernel's, one past the byte it stood on (the kernel passes the
 *      predicate's position + 1 as its base).
 * Deliberate differences (docs/design/filter.md): a control byte outside a
 * string is "unexpected character 0xNN at offset N" (fp_scan()); a trailing && or || and an
 * operator with no operand ("a == 1 && )") are "Meaningless filter
 * expression" where the kernel accepts the first and says "Error: (0)" for
 * the second; numbers are range-checked against the field; ~ is a plain glob
 * (the kernel's '!'-prefix and leading-digit quirks are not copied); at most
 * FDR_FILTER_MAX_INSNS predicates and FDR_FILTER_MAX_DEPTH nested '(' fit.
 *
 * This file runs in the control process (and in applications applying
 * pending rules), never on the event path: no allocation, no stdio, and the
 * event descriptor is read as hostile shared memory.
 */
#include <errno.h>
#include <string.h>

#include "filter.h"

enum fp_class {
	FP_NUM = 1, /* integer field: == != < <= > >= & and CPUS */
	FP_STR, /* char array, __data_loc string, tail chars: == != ~ */
	FP_CPU, /* the CPU pseudo-field: numeric */
	FP_COMM, /* the COMM pseudo-field: string */
	FP_BAD, /* a field we cannot compare (odd size, unknown kind) */
};

struct fp_field {
	int cls; /* enum fp_class */
	uint8_t src; /* enum fdr_filter_src */
	uint16_t off;
	uint16_t size;
	int is_signed;
};

enum fp_op { OP_GLOB, OP_NE, OP_EQ, OP_LE, OP_LT, OP_GE, OP_GT, OP_BAND, OP_NR };

/* Longest first where one is a prefix of another, as the kernel's ops[] table. */
static const char *const fp_ops[OP_NR] = { "~", "!=", "==", "<=", "<", ">=", ">", "&" };

enum fp_node_kind { N_LEAF, N_AND, N_OR };

struct fp_node {
	uint8_t kind; /* enum fp_node_kind */
	uint8_t neg; /* an odd number of '!' applies */
	uint8_t first; /* index of the leftmost predicate below */
	uint8_t pred; /* N_LEAF: the predicate's index */
	int16_t left, right; /* N_AND, N_OR */
};

#define FP_MAX_NODES (2 * FDR_FILTER_MAX_INSNS)
#define FP_MAX_OPS (4 * FDR_FILTER_MAX_DEPTH + 8)
#define FP_MAX_TEXT (1 << 20) /* positions stay ints; the kernel takes less than a page */

struct fp_state {
	const char *text;
	int len; /* of the text without trailing white space, as the kernel strips it */
	const struct fdr_abi_event *e;
	struct fdr_filter_error *err;
	struct fdr_filter_prog prog; /* built here, copied out on success */
	struct fp_node nodes[FP_MAX_NODES];
	int nr_nodes;
	int16_t vals[FDR_FILTER_MAX_INSNS]; /* operand stack: node indexes */
	int nr_vals;
	char ops[FP_MAX_OPS]; /* operator stack: '(' '!' '&' '|' */
	int nr_ops;
	int negs[FDR_FILTER_MAX_INSNS]; /* predicate i compiles as its negation (!=, >=, <=) */
};

/* ---- characters (ASCII, never the locale) ------------------------------------------ */

static int fp_isspace(int c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static int fp_isdigit(int c)
{
	return c >= '0' && c <= '9';
}

static int fp_isalnum(int c)
{
	return fp_isdigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int fp_digit_val(int c)
{
	if (fp_isdigit(c))
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	return 99;
}

/* The text ends at len: trailing white space is not part of it. */
static int fp_ch(const struct fp_state *st, int i)
{
	return i < st->len ? (unsigned char)st->text[i] : 0;
}

static int fp_error(struct fp_state *st, int code, int pos)
{
	st->err->code = code;
	st->err->pos = pos;
	return -EINVAL;
}

/**
 * fdr_filter_text_len - length of @text without its trailing white space
 * @text: a filter as written; NULL counts as empty
 *
 * The kernel strips trailing white space (the newline of `echo`) before it
 * parses and before it stores the text that the filter file reads back.
 */
size_t fdr_filter_text_len(const char *text)
{
	size_t n = text ? strlen(text) : 0;

	while (n && fp_isspace((unsigned char)text[n - 1]))
		n--;
	return n;
}

/* ---- pass 1: quotes and parentheses (the kernel's calc_stack) ---------------------- */

/*
 * Returns 0 and sets *nr_preds (a rough count: 0 means there is nothing to
 * parse), or a parse error at the kernel's position.
 */
static int fp_scan(struct fp_state *st, int *nr_preds)
{
	int open = 1, quote = 0, last_quote = 0, is_pred = 0, preds = 0, level, i;

	for (i = 0; i < st->len; i++) {
		int c = fp_ch(st, i);

		if (fp_isspace(c))
			continue;
		if (quote) {
			if (c == quote)
				quote = 0;
			continue;
		}
		/*
		 * fdr: a control byte outside a string is named with its offset (the
		 * kernel's "Too many terms" or "Field not found" said neither what nor
		 * where, and a caret under an invisible byte shows nothing)
		 */
		if (c < 0x20 || c == 0x7f) {
			st->err->ch = c;
			return fp_error(st, FDR_FILTER_ERR_BAD_CHAR, i);
		}
		switch (c) {
		case '\'':
		case '"':
			quote = c;
			last_quote = i;
			break;
		case '|':
		case '&':
			if (fp_ch(st, i + 1) != c)
				break;
			is_pred = 0;
			continue;
		case '(':
			is_pred = 0;
			open++;
			continue;
		case ')':
			is_pred = 0;
			if (open == 1)
				return fp_error(st, FDR_FILTER_ERR_TOO_MANY_CLOSE, i);
			open--;
			continue;
		}
		if (!is_pred) {
			preds++;
			is_pred = 1;
		}
	}
	if (quote)
		return fp_error(st, FDR_FILTER_ERR_MISSING_QUOTE, last_quote);
	if (open != 1) {
		/* the unmatched '(': scan back; like the kernel, index 0 is never looked at */
		level = open;
		for (i--; i > 0; i--) {
			int c = fp_ch(st, i);

			if (quote) {
				if (c == quote)
					quote = 0;
				continue;
			}
			switch (c) {
			case '(':
				if (level == open)
					return fp_error(st, FDR_FILTER_ERR_TOO_MANY_OPEN, i);
				level--;
				break;
			case ')':
				level++;
				break;
			case '\'':
			case '"':
				quote = c;
				break;
			}
		}
		return fp_error(st, FDR_FILTER_ERR_TOO_MANY_OPEN, 0);
	}
	*nr_preds = preds;
	return 0;
}

/* ---- fields ------------------------------------------------------------------------- */

static int fp_name_is(const char *name, size_t cap, const char *s, int n)
{
	return strnlen(name, cap) == (size_t)n && memcmp(name, s, (size_t)n) == 0;
}

static uint8_t fp_int_src(uint16_t size, int is_signed)
{
	switch (size) {
	case 1:
		return is_signed ? FDR_FSRC_S8 : FDR_FSRC_U8;
	case 2:
		return is_signed ? FDR_FSRC_S16 : FDR_FSRC_U16;
	case 4:
		return is_signed ? FDR_FSRC_S32 : FDR_FSRC_U32;
	case 8:
		return is_signed ? FDR_FSRC_S64 : FDR_FSRC_U64;
	}
	return 0;
}

/* The descriptor of an event field, as the filter sees it. */
static void fp_from_abi(const struct fdr_abi_field *af, struct fp_field *f)
{
	uint8_t kind = af->kind;

	f->off = af->offset;
	f->size = af->size;
	f->is_signed = 0;
	switch (kind) {
	case FDR_KIND_INT:
	case FDR_KIND_BOOL:
	case FDR_KIND_ULONG_IP:
		f->is_signed = kind == FDR_KIND_INT && af->is_signed;
		f->src = fp_int_src(f->size, f->is_signed);
		f->cls = f->src ? FP_NUM : FP_BAD;
		return;
	case FDR_KIND_CHARS:
		f->cls = FP_STR;
		f->src = FDR_FSRC_CHARS;
		return;
	case FDR_KIND_STRING:
	case FDR_KIND_BYTES: /* the kernel: a __data_loc type naming "char" is a string */
		f->cls = FP_STR;
		f->src = FDR_FSRC_DLOC;
		return;
	case FDR_KIND_TAIL_CHARS:
		f->cls = FP_STR;
		f->src = FDR_FSRC_TAIL;
		return;
	}
	f->cls = FP_BAD;
	f->src = 0;
}

/*
 * The kernel's lookup order: the event's own fields, then the generic
 * pseudo-fields, then the common header.
 */
static int fp_find_field(const struct fp_state *st, const char *s, int n, struct fp_field *f)
{
	static const struct {
		const char *name;
		uint16_t off, size;
		uint8_t src;
	} common[] = {
		{ "common_type", 0, 2, FDR_FSRC_U16 },
		{ "common_flags", 2, 1, FDR_FSRC_U8 },
		{ "common_preempt_count", 3, 1, FDR_FSRC_U8 },
		{ "common_pid", 4, 4, FDR_FSRC_S32 },
	};
	static const char *const cpu_names[] = { "CPU", "cpu", "common_cpu" };
	static const char *const comm_names[] = { "COMM", "comm" };
	uint32_t i, nf;

	memset(f, 0, sizeof(*f));
	if (st->e) {
		nf = st->e->nr_fields < FDR_MAX_FIELDS ? st->e->nr_fields : FDR_MAX_FIELDS;
		for (i = 0; i < nf; i++) {
			const struct fdr_abi_field *af = &st->e->fields[i];

			if (fp_name_is(af->name, sizeof(af->name), s, n)) {
				fp_from_abi(af, f);
				return 1;
			}
		}
	}
	for (i = 0; i < sizeof(cpu_names) / sizeof(cpu_names[0]); i++) {
		if (fp_name_is(cpu_names[i], 16, s, n)) {
			f->cls = FP_CPU;
			f->src = FDR_FSRC_CPU;
			f->size = 4;
			f->is_signed = 1;
			return 1;
		}
	}
	for (i = 0; i < sizeof(comm_names) / sizeof(comm_names[0]); i++) {
		if (fp_name_is(comm_names[i], 16, s, n)) {
			f->cls = FP_COMM;
			f->src = FDR_FSRC_COMM;
			f->size = FDR_COMM_LEN;
			return 1;
		}
	}
	for (i = 0; i < sizeof(common) / sizeof(common[0]); i++) {
		if (fp_name_is(common[i].name, 32, s, n)) {
			f->cls = FP_NUM;
			f->src = common[i].src;
			f->off = common[i].off;
			f->size = common[i].size;
			f->is_signed = common[i].src == FDR_FSRC_S32;
			return 1;
		}
	}
	return 0;
}

static int fp_is_string(const struct fp_field *f)
{
	return f->cls == FP_STR || f->cls == FP_COMM;
}

/* ---- values ----------------------------------------------------------------------- */

/*
 * An integer as the kernel's kstrtoull/kstrtoll read it (base 0: 0x hex, 0
 * octal, else decimal; '-' only for signed fields), then checked against the
 * field's width. A signed field takes its signed range, and in hex or octal
 * also any bit pattern of its width (0xffffffff is -1 for an int). Returns 0 or -1.
 */
static int fp_parse_int(const char *s, int n, const struct fp_field *f, uint64_t *out)
{
	unsigned bits = f->size * 8u;
	uint64_t mag = 0, umax, smax;
	int neg = 0, base = 10, i = 0, digits = 0;

	if (n > 0 && s[0] == '-') {
		if (!f->is_signed)
			return -1;
		neg = 1;
		i = 1;
	}
	if (i + 2 < n && s[i] == '0' && (s[i + 1] | 0x20) == 'x' &&
	    fp_digit_val((unsigned char)s[i + 2]) < 16) {
		base = 16;
		i += 2;
	} else if (i < n && s[i] == '0') {
		base = 8;
	}
	for (; i < n; i++) {
		unsigned d = (unsigned)fp_digit_val((unsigned char)s[i]);

		if (d >= (unsigned)base)
			return -1;
		if (mag > (UINT64_MAX - d) / (unsigned)base)
			return -1;
		mag = mag * (unsigned)base + d;
		digits++;
	}
	if (!digits)
		return -1;
	umax = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
	smax = umax >> 1;
	if (!f->is_signed) {
		if (mag > umax)
			return -1;
		*out = mag;
		return 0;
	}
	if (neg) {
		if (mag > smax + 1)
			return -1;
		*out = (uint64_t)0 - mag;
		return 0;
	}
	if (mag <= smax) {
		*out = mag;
		return 0;
	}
	if (base == 10 || mag > umax)
		return -1;
	/* a bit pattern: sign-extend from the field's width */
	*out = mag | ~umax;
	return 0;
}

/* A CPU number of a cpulist: decimal, or N for the last CPU. Returns -1 if none or too big. */
static int fp_cpu_num(const char *s, int n, int *i, uint32_t *out)
{
	uint32_t v = 0;

	if (*i < n && s[*i] == 'N') {
		(*i)++;
		*out = FDR_MAX_CPUS - 1;
		return 0;
	}
	if (*i >= n || !fp_isdigit((unsigned char)s[*i]))
		return -1;
	for (; *i < n && fp_isdigit((unsigned char)s[*i]); (*i)++) {
		v = v * 10 + (uint32_t)(s[*i] - '0');
		if (v >= FDR_MAX_CPUS)
			return -1;
	}
	*out = v;
	return 0;
}

static int fp_end_of_region(const char *s, int n, int i)
{
	return i >= n || fp_isspace((unsigned char)s[i]) || s[i] == ',';
}

/*
 * A cpulist as the kernel's cpulist_parse() (bitmap_parselist()) takes it:
 * regions "A", "A-B", "A-B:used/group" or "all", N standing for the last
 * CPU, separated by ',' or blanks. Sets bits in @mask (FDR_MAX_CPUS bits).
 * Returns 0 or -1.
 */
static int fp_parse_cpulist(const char *s, int n, uint8_t *mask)
{
	int i = 0;

	for (;;) {
		uint32_t a, b, used, group, cpu;

		while (i < n && (fp_isspace((unsigned char)s[i]) || s[i] == ','))
			i++;
		if (i >= n)
			return 0;
		if (n - i >= 3 && (s[i] | 0x20) == 'a' && (s[i + 1] | 0x20) == 'l' &&
		    (s[i + 2] | 0x20) == 'l') {
			a = 0;
			b = FDR_MAX_CPUS - 1;
			i += 3;
		} else {
			if (fp_cpu_num(s, n, &i, &a))
				return -1;
			b = a;
			if (!fp_end_of_region(s, n, i)) {
				if (s[i] != '-')
					return -1;
				i++;
				if (fp_cpu_num(s, n, &i, &b))
					return -1;
			}
		}
		used = group = b - a + 1;
		if (!fp_end_of_region(s, n, i)) {
			if (s[i] != ':')
				return -1;
			i++;
			if (fp_cpu_num(s, n, &i, &used) || i >= n || s[i] != '/')
				return -1;
			i++;
			if (fp_cpu_num(s, n, &i, &group))
				return -1;
		}
		if (!fp_end_of_region(s, n, i) || a > b || !group || used > group)
			return -1;
		for (cpu = a; cpu <= b; cpu++)
			if ((cpu - a) % group < used)
				mask[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
	}
}

/* Append @n bytes to the pool; returns the pool offset or -1 when it is full. */
static int fp_pool_add(struct fp_state *st, const void *p, int n)
{
	int off = st->prog.pool_len;

	if (n < 0 || n > FDR_FILTER_POOL_SIZE - off)
		return -1;
	if (n)
		memcpy(st->prog.pool + off, p, (size_t)n);
	st->prog.pool_len = (uint16_t)(off + n);
	return off;
}

/* ---- one predicate (the kernel's parse_pred) ---------------------------------------- */

/*
 * The kind of string compare for a ~ pattern: a '*' only at the ends needs no
 * glob. Sets [*start, *end) to the part that is compared.
 */
static int fp_glob_kind(const char *p, int n, int *start, int *end)
{
	int lead, trail = 0, i;

	for (i = 0; i < n; i++)
		if (p[i] == '?' || p[i] == '[' || p[i] == '\\')
			return FDR_FOP_STR_GLOB;
	lead = n > 0 && p[0] == '*';
	*start = lead;
	*end = n;
	if (*end > *start && p[*end - 1] == '*') {
		trail = 1;
		(*end)--;
	}
	for (i = *start; i < *end; i++)
		if (p[i] == '*')
			return FDR_FOP_STR_GLOB;
	if (lead && trail)
		return FDR_FOP_STR_SUBSTR;
	if (lead)
		return FDR_FOP_STR_SUFFIX;
	if (trail)
		return FDR_FOP_STR_PREFIX;
	return FDR_FOP_STR_EQ;
}

static uint8_t fp_unsigned_src(uint8_t src)
{
	switch (src) {
	case FDR_FSRC_S8:
		return FDR_FSRC_U8;
	case FDR_FSRC_S16:
		return FDR_FSRC_U16;
	case FDR_FSRC_S32:
		return FDR_FSRC_U32;
	case FDR_FSRC_S64:
		return FDR_FSRC_U64;
	}
	return src;
}

/* FIELD & CPUS{list} (also == and !=). @i is at "CPUS". */
static int fp_pred_cpus(struct fp_state *st, int i, int base, const struct fp_field *f, int op,
			struct fdr_filter_insn *in, int *neg)
{
	uint8_t mask[FDR_MAX_CPUS / 8];
	int start, nbits = 0, last = -1, c, moff;

	if (fp_is_string(f))
		return fp_error(st, FDR_FILTER_ERR_ILLEGAL_FIELD_OP, base + i);
	if (op != OP_EQ && op != OP_NE && op != OP_BAND)
		return fp_error(st, FDR_FILTER_ERR_ILLEGAL_FIELD_OP, base + i);
	i += 4;
	if (fp_ch(st, i++) != '{')
		return fp_error(st, FDR_FILTER_ERR_MISSING_BRACE_OPEN, base + i);
	start = i;
	while (fp_ch(st, i) && fp_ch(st, i) != '}')
		i++;
	if (fp_ch(st, i) != '}')
		return fp_error(st, FDR_FILTER_ERR_MISSING_BRACE_CLOSE, base + i);
	if (start == i)
		return fp_error(st, FDR_FILTER_ERR_INVALID_CPULIST, base + i);
	memset(mask, 0, sizeof(mask));
	if (fp_parse_cpulist(st->text + start, i - start, mask))
		return fp_error(st, FDR_FILTER_ERR_INVALID_CPULIST, base + i);
	i++;
	for (c = 0; c < FDR_MAX_CPUS; c++) {
		if (mask[c / 8] & (1u << (c % 8))) {
			nbits++;
			last = c;
		}
	}
	in->src = f->cls == FP_CPU ? FDR_FSRC_CPU : fp_unsigned_src(f->src);
	*neg = op == OP_NE;
	if (nbits == 1) {
		/* one CPU: a plain compare, & becomes == (the kernel does the same) */
		in->op = FDR_FOP_EQ;
		in->imm = (uint64_t)last;
	} else if (op == OP_BAND && nbits) {
		in->op = FDR_FOP_INMASK;
		moff = fp_pool_add(st, mask, last / 8 + 1);
		if (moff < 0)
			return -ENOSPC;
		in->imm = (uint64_t)moff | (uint64_t)(last / 8 + 1) << 16;
	} else {
		/* one CPU never equals a set of several (nor an empty one) */
		in->op = FDR_FOP_FALSE;
	}
	return i;
}

/* FIELD OP "string" or 'string'. @i is at the quote. */
static int fp_pred_string(struct fp_state *st, int i, int base, const struct fp_field *f, int op,
			  struct fdr_filter_insn *in, int *neg)
{
	int q = fp_ch(st, i), s = i, n, kind, ps = 0, pe = 0, poff;
	const char *pat;

	switch (op) {
	case OP_NE:
	case OP_GLOB:
	case OP_EQ:
		break;
	default:
		return fp_error(st, FDR_FILTER_ERR_ILLEGAL_FIELD_OP, base + i);
	}
	if (!fp_is_string(f))
		return fp_error(st, FDR_FILTER_ERR_EXPECT_DIGIT, base + i);
	for (i++; fp_ch(st, i); i++)
		if (fp_ch(st, i) == q)
			break;
	if (!fp_ch(st, i))
		return fp_error(st, FDR_FILTER_ERR_MISSING_QUOTE, base + i);
	s++;
	n = i - s;
	if (n > FDR_FILTER_MAX_STR)
		return fp_error(st, FDR_FILTER_ERR_OPERAND_TOO_LONG, base + i);
	pat = st->text + s;
	if (op == OP_GLOB) {
		kind = fp_glob_kind(pat, n, &ps, &pe);
		if (kind == FDR_FOP_STR_GLOB || kind == FDR_FOP_STR_EQ) {
			ps = 0;
			pe = n;
		}
	} else {
		kind = FDR_FOP_STR_EQ;
		pe = n;
	}
	poff = fp_pool_add(st, pat + ps, pe - ps);
	if (poff < 0)
		return -ENOSPC;
	in->op = (uint8_t)kind;
	in->src = f->src;
	in->imm = (uint64_t)poff | (uint64_t)(pe - ps) << 16;
	*neg = op == OP_NE;
	return i + 1;
}

/* FIELD OP number. @i is at the first digit or '-'. */
static int fp_pred_number(struct fp_state *st, int i, int base, const struct fp_field *f, int op,
			  struct fdr_filter_insn *in, int *neg)
{
	static const uint8_t fop[OP_NR] = {
		[OP_NE] = FDR_FOP_EQ,	  [OP_EQ] = FDR_FOP_EQ, [OP_LE] = FDR_FOP_GT,
		[OP_LT] = FDR_FOP_LT,	  [OP_GE] = FDR_FOP_LT, [OP_GT] = FDR_FOP_GT,
		[OP_BAND] = FDR_FOP_BAND,
	};
	char num[24];
	int s = i;
	uint64_t v;

	if (fp_is_string(f))
		return fp_error(st, FDR_FILTER_ERR_EXPECT_STRING, base + i);
	if (op == OP_GLOB)
		return fp_error(st, FDR_FILTER_ERR_ILLEGAL_FIELD_OP, base + i);
	if (fp_ch(st, i) == '-')
		i++;
	while (fp_isalnum(fp_ch(st, i)))
		i++;
	if (i - s >= (int)sizeof(num))
		return fp_error(st, FDR_FILTER_ERR_OPERAND_TOO_LONG, base + i);
	memcpy(num, st->text + s, (size_t)(i - s));
	if (fp_parse_int(num, i - s, f, &v))
		return fp_error(st, FDR_FILTER_ERR_ILLEGAL_INTVAL, base + s);
	in->op = fop[op];
	in->src = f->src;
	in->imm = v;
	*neg = op == OP_NE || op == OP_LE || op == OP_GE;
	return i;
}

/*
 * FIELD OP VALUE starting at @start. On success fills prog.insns[nr] (without
 * its jumps) and returns the index just past the predicate.
 */
static int fp_pred(struct fp_state *st, int start, int nr)
{
	struct fdr_filter_insn *in = &st->prog.insns[nr];
	int base = 1; /* the kernel blames (predicate position + 1) + offset in it */
	int i = start, op, n, c, neg = 0, ret;
	struct fp_field f;

	while (fp_ch(st, i) == '_' || fp_isalnum(fp_ch(st, i)))
		i++;
	n = i - start;
	if (!n) {
		/* no field: an operator or ')' where an operand belongs, or junk */
		c = fp_ch(st, start);
		if (!c || c == ')' || c == '&' || c == '|')
			return fp_error(st, FDR_FILTER_ERR_INVALID_FILTER, start);
		return fp_error(st, FDR_FILTER_ERR_FIELD_NOT_FOUND, start + base);
	}
	if (!fp_find_field(st, st->text + start, n, &f))
		return fp_error(st, FDR_FILTER_ERR_FIELD_NOT_FOUND, base + i);
	while (fp_isspace(fp_ch(st, i)))
		i++;
	for (op = 0; op < OP_NR; op++) {
		size_t ol = strlen(fp_ops[op]);

		if ((int)ol <= st->len - i && memcmp(st->text + i, fp_ops[op], ol) == 0)
			break;
	}
	if (op == OP_NR)
		return fp_error(st, FDR_FILTER_ERR_INVALID_OP, base + i);
	i += (int)strlen(fp_ops[op]);
	while (fp_isspace(fp_ch(st, i)))
		i++;
	if (f.cls == FP_BAD)
		return fp_error(st, FDR_FILTER_ERR_ILLEGAL_FIELD_OP, base + i);
	memset(in, 0, sizeof(*in));
	in->off = f.off;
	in->size = f.size;
	c = fp_ch(st, i);
	if (st->len - i >= 4 && memcmp(st->text + i, "CPUS", 4) == 0)
		ret = fp_pred_cpus(st, i, base, &f, op, in, &neg);
	else if (c == '\'' || c == '"')
		ret = fp_pred_string(st, i, base, &f, op, in, &neg);
	else if (fp_isdigit(c) || c == '-')
		ret = fp_pred_number(st, i, base, &f, op, in, &neg);
	else
		return fp_error(st, FDR_FILTER_ERR_INVALID_VALUE, base + i);
	if (ret == -ENOSPC)
		return fp_error(st, FDR_FILTER_ERR_TOO_MANY_PREDS, start);
	if (ret < 0)
		return ret;
	if (in->src == FDR_FSRC_CPU)
		st->prog.flags |= FDR_FILTER_F_CPU;
	if (in->src == FDR_FSRC_COMM)
		st->prog.flags |= FDR_FILTER_F_COMM;
	if (in->src == FDR_FSRC_CPU || in->src == FDR_FSRC_COMM) {
		in->off = 0;
		in->size = in->src == FDR_FSRC_CPU ? 4 : FDR_COMM_LEN;
	}
	st->negs[nr] = neg;
	return ret;
}

/* ---- pass 2: the expression (the kernel's predicate_parse) ------------------------- */

static int fp_new_node(struct fp_state *st, int kind, int left, int right, int pred)
{
	struct fp_node *n = &st->nodes[st->nr_nodes];

	n->kind = (uint8_t)kind;
	n->neg = 0;
	n->left = (int16_t)left;
	n->right = (int16_t)right;
	n->pred = (uint8_t)pred;
	n->first = kind == N_LEAF ? (uint8_t)pred : st->nodes[left].first;
	return st->nr_nodes++;
}

/* Apply the operator on top of the stack to the operands. */
static void fp_reduce(struct fp_state *st)
{
	char op = st->ops[--st->nr_ops];
	int b, a;

	if (op == '!') {
		st->nodes[st->vals[st->nr_vals - 1]].neg ^= 1;
		return;
	}
	b = st->vals[--st->nr_vals];
	a = st->vals[--st->nr_vals];
	st->vals[st->nr_vals++] = (int16_t)fp_new_node(st, op == '&' ? N_AND : N_OR, a, b, 0);
}

static int fp_top(const struct fp_state *st)
{
	return st->nr_ops ? st->ops[st->nr_ops - 1] : 0;
}

/* An operand is complete: the '!' in front of it apply now. */
static void fp_operand_done(struct fp_state *st)
{
	while (fp_top(st) == '!')
		fp_reduce(st);
}

static int fp_parse(struct fp_state *st)
{
	int i = 0, nr = 0, depth = 0, last_op = 0, c, ret;

	for (;;) {
		/* an operand: '(' and '!' come first */
		c = fp_ch(st, i);
		if (fp_isspace(c)) {
			i++;
			continue;
		}
		if (c == '(') {
			if (++depth > FDR_FILTER_MAX_DEPTH || st->nr_ops >= FP_MAX_OPS - 1)
				return fp_error(st, FDR_FILTER_ERR_TOO_MANY_OPEN, i);
			st->ops[st->nr_ops++] = '(';
			i++;
			continue;
		}
		if (c == '!' && fp_ch(st, i + 1) != '=' && fp_ch(st, i + 1) != '~') {
			if (fp_top(st) == '!')
				st->nr_ops--; /* !! cancels */
			else
				st->ops[st->nr_ops++] = '!';
			i++;
			continue;
		}
		if (!c) {
			if (!nr)
				return fp_error(st, FDR_FILTER_ERR_NO_FILTER, i);
			/* fdr: a trailing && or || is an error (the kernel accepts it) */
			return fp_error(st, FDR_FILTER_ERR_INVALID_FILTER, last_op);
		}
		if (nr >= FDR_FILTER_MAX_INSNS)
			return fp_error(st, FDR_FILTER_ERR_TOO_MANY_PREDS, i);
		ret = fp_pred(st, i, nr);
		if (ret < 0)
			return ret;
		st->vals[st->nr_vals++] = (int16_t)fp_new_node(st, N_LEAF, 0, 0, nr);
		nr++;
		i = ret;
		fp_operand_done(st);

		/* after an operand: ')' '&&' '||' or the end */
		for (;;) {
			c = fp_ch(st, i);
			if (fp_isspace(c)) {
				i++;
				continue;
			}
			if ((c == '&' || c == '|') && fp_ch(st, i + 1) == c) {
				while (fp_top(st) == '&' || (c == '|' && fp_top(st) == '|'))
					fp_reduce(st);
				st->ops[st->nr_ops++] = (char)c;
				last_op = i;
				i += 2;
				break;
			}
			if (c && c != ')')
				return fp_error(st, FDR_FILTER_ERR_TOO_MANY_PREDS, i);
			while (fp_top(st) == '&' || fp_top(st) == '|')
				fp_reduce(st);
			if (!c) {
				if (st->nr_ops) /* calc_stack saw to this; never trust one pass */
					return fp_error(st, FDR_FILTER_ERR_TOO_MANY_OPEN, i);
				st->prog.nr_insns = (uint16_t)nr;
				return 0;
			}
			if (fp_top(st) != '(')
				return fp_error(st, FDR_FILTER_ERR_TOO_MANY_CLOSE, i + 1);
			st->nr_ops--;
			depth--;
			i++;
			fp_operand_done(st);
		}
	}
}

/* ---- code generation ------------------------------------------------------------------ */

/* Give each predicate its jumps: see the essay at the top. No recursion. */
static void fp_codegen(struct fp_state *st)
{
	struct {
		int16_t node;
		uint8_t t, f;
	} work[FP_MAX_NODES];
	int nw = 0, nr = st->prog.nr_insns;

	work[nw].node = st->vals[0];
	work[nw].t = (uint8_t)nr;
	work[nw].f = (uint8_t)(nr + 1);
	nw++;
	while (nw) {
		const struct fp_node *n = &st->nodes[work[--nw].node];
		uint8_t t = work[nw].t, f = work[nw].f, x;

		if (n->neg) {
			x = t;
			t = f;
			f = x;
		}
		if (n->kind == N_LEAF) {
			struct fdr_filter_insn *in = &st->prog.insns[n->pred];

			/* a predicate compiled as its negation (!=, >=, <=) swaps too */
			in->jt = st->negs[n->pred] ? f : t;
			in->jf = st->negs[n->pred] ? t : f;
			continue;
		}
		work[nw].node = n->left;
		work[nw].t = n->kind == N_AND ? st->nodes[n->right].first : t;
		work[nw].f = n->kind == N_AND ? f : st->nodes[n->right].first;
		nw++;
		work[nw].node = n->right;
		work[nw].t = t;
		work[nw].f = f;
		nw++;
	}
}

/**
 * fdr_filter_init - make @p the empty program, which records every event
 */
void fdr_filter_init(struct fdr_filter_prog *p)
{
	memset(p, 0, sizeof(*p));
	p->struct_size = sizeof(*p);
	p->magic = FDR_FILTER_MAGIC;
	p->version = FDR_FILTER_VERSION;
}

/**
 * fdr_filter_compile - compile a filter expression for one event
 * @e: the event whose fields the expression names; NULL allows only the
 *     common_* fields and the CPU/COMM pseudo-fields. Read as hostile.
 * @text: the expression, NUL-terminated, as written (trailing white space,
 *        such as echo's newline, is ignored)
 * @out: receives the program on success (0 or FDR_FILTER_CLEAR); left alone
 *       on failure, so a rejected filter never replaces a working one
 * @err: receives the kernel's error code and position on failure; set to
 *       { 0, 0 } on success
 *
 * Grammar and error positions are the kernel's (docs/tracefs.md, Filters); the
 * deliberate differences are listed at the top of this file. Allocates
 * nothing, prints nothing; uses about 10 KiB of stack.
 *
 * Returns: 0 on success, FDR_FILTER_CLEAR for "0" (remove the filter: @out is
 * the empty program), -EINVAL for a parse error (see @err: code 0 is the
 * kernel's "Error: (0)", for a text with nothing in it), or -EINVAL with
 * code 0 when @text or @out or @err is NULL.
 */
int fdr_filter_compile(const struct fdr_abi_event *e, const char *text, struct fdr_filter_prog *out,
		       struct fdr_filter_error *err)
{
	struct fp_state st;
	struct fdr_filter_error dummy;
	int nr_preds = 0, ret;
	size_t lead = 0, tlen;

	if (!err)
		err = &dummy;
	err->code = FDR_FILTER_ERR_NONE;
	err->pos = 0;
	if (!text || !out)
		return -EINVAL;
	memset(&st.prog, 0, sizeof(st.prog));
	st.nr_nodes = st.nr_vals = st.nr_ops = 0;
	st.text = text;
	st.e = e;
	st.err = err;
	tlen = fdr_filter_text_len(text);
	if (tlen > FP_MAX_TEXT)
		return fp_error(&st, FDR_FILTER_ERR_OPERAND_TOO_LONG, FP_MAX_TEXT);
	st.len = (int)tlen;
	while ((int)lead < st.len && fp_isspace((unsigned char)text[lead]))
		lead++;
	if (st.len - (int)lead == 1 && text[lead] == '0') {
		fdr_filter_init(out);
		return FDR_FILTER_CLEAR;
	}
	ret = fp_scan(&st, &nr_preds);
	if (ret)
		return ret;
	if (!nr_preds)
		return -EINVAL; /* the kernel's "Error: (0)": err->code stays NONE */
	ret = fp_parse(&st);
	if (ret)
		return ret;
	fp_codegen(&st);
	st.prog.struct_size = sizeof(st.prog);
	st.prog.magic = FDR_FILTER_MAGIC;
	st.prog.version = FDR_FILTER_VERSION;
	if (e) {
		st.prog.event_id = e->id;
		st.prog.layout_hash = e->layout_hash;
	}
	memcpy(out, &st.prog, sizeof(*out));
	return 0;
}
