// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * event-filter.c - event filters for tools: the kernel's filter grammar (what an
 * event's filter file takes) compiled for one event's fields and run on records
 * of that event, e.g. by `fdr report -F` on a trace.dat file.
 *
 * A thin handle over lib/common's compiler and evaluator (filter.h), which stay
 * internal: the program's layout is not an API. The control tree compiles the
 * filters it stores in shared memory itself (hooks-ctl.c); this is for filtering
 * records a tool reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdr/fdr-ctl.h"
#include "common/filter.h"

struct fdr_event_filter {
	struct fdr_filter_prog prog;
};

/**
 * fdr_event_filter_new - compile @text for the fields of event @e
 * @e: the event (read as hostile); NULL allows only the common_* fields and
 *     the CPU/COMM pseudo-fields
 * @text: the expression as written (trailing white space is ignored)
 * @out: the filter, to fdr_event_filter_free(); NULL for "0" (no filter)
 * @msg, @msg_len: on -EINVAL, the kernel's error text (may be NULL/0)
 * @pos: on -EINVAL, the byte of @text where the parser stopped (may be NULL)
 *
 * Returns 0, -EINVAL (the text does not parse, or does not fit @e's fields),
 * -ENOMEM.
 */
int fdr_event_filter_new(const struct fdr_abi_event *e, const char *text,
			 struct fdr_event_filter **out, char *msg, size_t msg_len, int *pos)
{
	struct fdr_filter_error fe = { 0, 0, 0 };
	struct fdr_event_filter *f;
	int ret;

	*out = NULL;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	ret = fdr_filter_compile(e, text, &f->prog, &fe);
	if (ret < 0) {
		free(f);
		if (msg && msg_len)
			snprintf(msg, msg_len, "%s", fdr_filter_error_message(&fe));
		if (pos)
			*pos = fe.pos;
		return ret;
	}
	if (ret == FDR_FILTER_CLEAR) {
		free(f); /* "0": no filter, as in a filter file */
		return 0;
	}
	*out = f;
	return 0;
}

/**
 * fdr_event_filter_match - does the record pass the filter?
 * @f: a filter of the record's event; NULL passes everything
 * @payload, @len: the record's payload (common header first), read as hostile
 * @cpu: the CPU it was written on (the CPU pseudo-field)
 * @comm: the writer's name (the COMM pseudo-field); NULL or "" if unknown
 * Returns 1 or 0.
 */
int fdr_event_filter_match(const struct fdr_event_filter *f, const unsigned char *payload,
			   uint32_t len, uint32_t cpu, const char *comm)
{
	struct fdr_filter_ctx ctx = { .cpu = cpu };

	if (!f)
		return 1;
	if (comm)
		memcpy(ctx.comm, comm, strnlen(comm, sizeof(ctx.comm) - 1));
	return fdr_filter_eval(&f->prog, payload, len, &ctx) != 0;
}

/** fdr_event_filter_free - release @f; NULL is a no-op */
void fdr_event_filter_free(struct fdr_event_filter *f)
{
	free(f);
}

/**
 * fdr_event_filter_text_len - the length of @text without its trailing white
 * space (the newline of echo), as the parser and the filter file read it
 */
size_t fdr_event_filter_text_len(const char *text)
{
	return fdr_filter_text_len(text);
}
