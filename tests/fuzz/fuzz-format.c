// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-format.c - the text formatter fed a hostile registry entry and payload.
 *
 * The registry lives in shared memory, so a reader must survive any struct
 * fdr_abi_event: field offsets and sizes beyond the record, unknown kinds,
 * unterminated names, print formats with any conversion, print_args out of range.
 * Input: the first sizeof(struct fdr_abi_event) bytes are the entry (zero-filled
 * if the input is shorter), the rest is the record payload. We render the
 * event's format file and the record's body, then the whole record line
 * (fdr_format_record()) with the entry laid over a registered event of a
 * session, twice: the second line comes from the per-event plan and the
 * comm-pid column cached by the first, the way `fdr show` prints a trace.
 */
#include "fuzz.h"

static struct fdr_session *fz_s;
static uint32_t fz_slot, fz_id;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fdr_session_opts o = { .buffer_size_kb = 4 };
	struct fdr_abi_event t;
	const struct fdr_abi_control *ctl;
	uint32_t i;

	(void)argc;
	(void)argv;
	fz_s = fz_session_create(&o);
	fz_event_all(&t, "line", 0);
	fz_id = fz_register(fz_s, &t);
	ctl = fdr_session_control(fz_s);
	for (i = 0; i < FDR_MAX_EVENTS; i++)
		if (ctl->events[i].state == FDR_EVENT_READY && ctl->events[i].id == fz_id &&
		    strncmp(ctl->events[i].name, "line", FDR_NAME_LEN) == 0)
			break;
	if (i == FDR_MAX_EVENTS) {
		fprintf(stderr, "fuzz-format: the registered event is not in the registry\n");
		exit(2);
	}
	fz_slot = i;
	return 0;
}

/*
 * The record line of @payload with the hostile entry @e in the registry: id and
 * state kept (so that the record finds it) unless the input's first byte is odd,
 * the record's type set to the id, its pid, CPU and time taken from the input,
 * the instance's line options and clock from the first byte's other bits, the
 * pid's cmdline slot from 24 bytes near the input's end.
 */
static void fz_record_line(const struct fdr_abi_event *e, const uint8_t *data, size_t size,
			   unsigned char *payload, uint32_t len)
{
	struct fdr_abi_control *ctl = fdr_session_control(fz_s);
	struct fdr_abi_event *se = &ctl->events[fz_slot];
	struct fdr_abi_instance *in = &ctl->instances[0];
	const uint32_t opts = FDR_OPT_CONTEXT_INFO | FDR_OPT_IRQ_INFO | FDR_OPT_RECORD_TGID;
	uint8_t sel = size ? data[0] : 0;
	struct fdr_record rec = { 0 };
	struct fdr_buf b = { 0 };
	uint16_t type = (uint16_t)fz_id;
	int k;

	/* the line's columns and clock from the first byte: any clock number, even bad */
	in->options = (in->options & ~opts) | (sel & 2 ? 0 : FDR_OPT_CONTEXT_INFO) |
		      (sel & 4 ? 0 : FDR_OPT_IRQ_INFO) | (sel & 8 ? FDR_OPT_RECORD_TGID : 0);
	in->clock = sel >> 4;
	memcpy(se, e, sizeof(*se));
	if (!(sel & 1)) {
		se->id = fz_id;
		se->state = FDR_EVENT_READY;
	}
	if (len >= 2)
		memcpy(payload, &type, 2);
	if (len >= 8 && size >= 40) {
		/* the pid's cmdline slot: any bytes (a pid word, comm, tgid) */
		int32_t pid;

		memcpy(&pid, payload + 4, 4);
		memcpy(&ctl->cmdlines[(uint32_t)pid % FDR_CMDLINE_SLOTS], data + size - 36,
		       sizeof(struct fdr_abi_cmdline));
	}
	rec.payload = payload;
	rec.len = len;
	if (size >= 16) {
		memcpy(&rec.ts, data + size - 8, 8);
		memcpy(&rec.cpu, data + size - 12, 4);
	}
	for (k = 0; k < 2; k++) {
		fdr_format_record(fz_s, 0, &rec, &b);
		b.len = 0;
	}
	fdr_buf_free(&b);
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
		fz_record_line(e, data, size, payload, len);
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
