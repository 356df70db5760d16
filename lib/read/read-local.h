/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* read-local.h - libfdr-read internals shared by the files of lib/read. */
#ifndef FDR_READ_LOCAL_H
#define FDR_READ_LOCAL_H

#include "fdr/fdr-read.h"

#define FDR_READ_HIDDEN __attribute__((visibility("hidden")))

/* format.c: a field of a record, checked against the record's length */
FDR_READ_HIDDEN int fdr_field_get_int(const struct fdr_abi_field *f, const unsigned char *p,
				      uint32_t len, int64_t *v);
FDR_READ_HIDDEN int fdr_field_get_bytes(const struct fdr_abi_field *f, const unsigned char *p,
					uint32_t len, const unsigned char **s, uint32_t *n);

/* reader.c: what the reader checked at open, and its complaints (fdr_reader_error()) */
FDR_READ_HIDDEN uint32_t fdr_reader_subbuf_size(const struct fdr_reader *r);
FDR_READ_HIDDEN void fdr_reader_complain(struct fdr_reader *r, const char *text);

/* format-probe.c: dynamic probe events (struct fdr_abi_event.probe) */
#define FDR_PROBE_FAULT "(fault)" /* a string the probe could not read */
FDR_READ_HIDDEN int fdr_probe_print_fmt(const struct fdr_abi_event *e, struct fdr_buf *b);
FDR_READ_HIDDEN int fdr_probe_format_body(const struct fdr_abi_event *e, const unsigned char *p,
					  uint32_t len, struct fdr_buf *b);

#endif /* FDR_READ_LOCAL_H */
