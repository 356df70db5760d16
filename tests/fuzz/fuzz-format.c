// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-format.c - the text formatter fed a hostile registry entry and payload.
 *
 * The registry lives in shared memory, so a reader must survive any struct
 * fdr_abi_event: field offsets and sizes beyond the record, unknown kinds,
 * unterminated names, print formats with any conversion, print_args out of range.
 * Input: the first sizeof(struct fdr_abi_event) bytes are the entry (zero-filled
 * if the input is shorter), the rest is the record payload. We render the
 * event's format file and the record's body.
 */
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdr_abi_event *e = calloc(1, sizeof(*e));
	size_t n = size < sizeof(*e) ? size : sizeof(*e);
	unsigned char *payload;
	uint32_t len = (uint32_t)(size - n);
	struct fdr_buf b = { 0 };

	if (!e)
		return 0;
	memcpy(e, data, n);
	/* the payload in its own exact-size allocation: ASan sees reads past its end */
	payload = malloc(len ? len : 1);
	if (payload) {
		memcpy(payload, data + n, len);
		fdr_format_event_file(e, &b);
		fdr_format_body(e, payload, len, &b);
	}
	fdr_buf_free(&b);
	free(payload);
	free(e);
	return 0;
}

int fdr_fuzz_write_seeds(const char *dir)
{
	static const struct {
		const char *name, *str;
		int custom;
	} seeds[] = {
		{ "all-default", "hello", 0 },
		{ "all-custom", "a string", 1 },
		{ "all-empty-string", "", 1 },
	};
	unsigned char buf[sizeof(struct fdr_abi_event) + 512];
	const unsigned char bytes[] = { 0xde, 0xad, 0xbe, 0xef };
	struct fdr_abi_event e;
	size_t i;
	uint32_t len;
	int ret = 0;

	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		fz_event_all(&e, seeds[i].name, seeds[i].custom);
		e.id = 1000;
		memcpy(buf, &e, sizeof(e));
		len = fz_payload_all(buf + sizeof(e), 1000, 7, seeds[i].str, bytes, sizeof(bytes));
		ret |= fz_write_file(dir, seeds[i].name, buf, sizeof(e) + len);
	}
	/* ftrace:print, as session.c registers it, with a marker record */
	memset(&e, 0, sizeof(e));
	e.id = FDR_EVENT_ID_PRINT;
	e.state = FDR_EVENT_READY;
	snprintf(e.system, sizeof(e.system), "ftrace");
	snprintf(e.name, sizeof(e.name), "print");
	fz_field(&e, "ip", "unsigned long", 8, 8, FDR_KIND_ULONG_IP, 0);
	fz_field(&e, "buf", "char", 16, 0, FDR_KIND_TAIL_CHARS, 0);
	e.payload_size = 16;
	memcpy(buf, &e, sizeof(e));
	memset(buf + sizeof(e), 0, 16);
	memcpy(buf + sizeof(e) + 16, "hello marker\n", 14);
	ret |= fz_write_file(dir, "print", buf, sizeof(e) + 30);
	/* the entry alone: the format file of an event without a record */
	fz_event_all(&e, "noload", 1);
	ret |= fz_write_file(dir, "no-payload", &e, sizeof(e));
	return ret ? -EIO : 0;
}
