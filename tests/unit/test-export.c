// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-export.c - the pieces of fdr export that tables test best: JSON string
 * escaping (quotes, backslashes, control characters, valid and invalid UTF-8),
 * CTF identifiers made from any name, and the TSDL metadata of events whose
 * names are CTF keywords, hold forbidden bytes or collide once mangled. What
 * must not happen: a raw control byte or invalid UTF-8 in JSON, a keyword or a
 * forbidden byte as a TSDL identifier, two fields of one event with one name.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "fdr-criterion.h"
#include "fdr-test.h"
/* fdr_event_def_to_abi(), fdr_session_register_event(): libfdr internals */
#include "core/core-local.h"
#include "fdr/fdr-export.h"
#include "fdr/fdr-trace.h"

static struct fdr_test_env env;

static void fini(void)
{
	fdr_test_teardown(&env);
}

TestSuite(export, .fini = fini, .timeout = 30);

struct json_case {
	const char *in;
	size_t len;
	const char *out;
};

#define JC(s, o)                    \
	{                           \
		s, sizeof(s) - 1, o \
	}

Test(export, json_string_table)
{
	static const struct json_case cases[] = {
		JC("", "\"\""),
		JC("plain", "\"plain\""),
		JC("a\"b\\c", "\"a\\\"b\\\\c\""),
		JC("\n\t\r\b\f", "\"\\n\\t\\r\\b\\f\""),
		JC("\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\""),
		JC("nul\0in", "\"nul\\u0000in\""),
		JC("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
		   "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""),
		/* invalid: lone continuation, truncated, overlong, surrogate, > U+10FFFF */
		JC("\x80", "\"\\ufffd\""),
		JC("a\xc3", "\"a\\ufffd\""),
		JC("\xc0\xaf", "\"\\ufffd\\ufffd\""),
		JC("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""),
		JC("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""),
		JC("\xff ok", "\"\\ufffd ok\""),
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fdr_buf b = { 0 };

		cr_assert_eq(fdr_export_json_string(cases[i].in, cases[i].len, &b), 0);
		cr_expect_str_eq(b.data, cases[i].out, "case %zu", i);
		fdr_buf_free(&b);
	}
}

Test(export, ctf_ident_table)
{
	static const char *const cases[][2] = {
		{ "status", "_status" }, { "event", "_event" },	  { "align", "_align" },
		{ "x-y", "_x_y" },	 { "9lives", "_9lives" }, { "a b.c", "_a_b_c" },
		{ "\xc3\xa9", "___" },	 { "_x", "__x" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fdr_buf b = { 0 };

		cr_assert_eq(fdr_export_ctf_ident(cases[i][0], strlen(cases[i][0]), &b), 0);
		cr_expect_str_eq(b.data, cases[i][1], "case %zu", i);
		fdr_buf_free(&b);
	}
}

static void add_field(struct fdr_abi_event *e, const char *name, uint8_t kind, uint16_t size,
		      uint8_t is_signed)
{
	struct fdr_abi_field *f = &e->fields[e->nr_fields++];

	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(f->type, sizeof(f->type), "x");
	f->kind = kind;
	f->size = size;
	f->is_signed = is_signed;
	f->offset = (uint16_t)e->payload_size;
	e->payload_size += size;
}

Test(export, ctf_metadata_odd_names)
{
	static const unsigned char uuid[16] = { 1, 2, 3 };
	struct fdr_abi_event e;
	struct fdr_trace *t;
	struct fdr_buf b = { 0 };
	uint32_t slot;

	cr_assert_eq(fdr_test_setup(&env, NULL), 0);
	memset(&e, 0, sizeof(e));
	snprintf(e.system, sizeof(e.system), "sys");
	snprintf(e.name, sizeof(e.name), "struct \"q\" \\ \xc3\xa9");
	e.payload_size = 8;
	e.layout_hash = 42;
	add_field(&e, "align", FDR_KIND_INT, 4, 1);
	add_field(&e, "a-b", FDR_KIND_INT, 8, 0);
	add_field(&e, "a.b", FDR_KIND_BOOL, 1, 0);
	add_field(&e, "blob", FDR_KIND_BYTES, 4, 0);
	add_field(&e, "_blob_length", FDR_KIND_INT, 2, 0);
	add_field(&e, "name", FDR_KIND_CHARS, 16, 0);
	add_field(&e, "ip", FDR_KIND_ULONG_IP, 8, 0);
	add_field(&e, "caller", FDR_KIND_ULONG_ARRAY, 32, 0);
	cr_assert_eq(fdr_session_lock(env.s), 0);
	cr_assert_eq(fdr_session_register_event(env.s, &e, &slot), 0);
	fdr_session_unlock(env.s);
	cr_assert_eq(fdr_trace_open_session(env.s, 0, 0, &t), 0);
	cr_assert_eq(fdr_export_ctf_metadata(t, uuid, &b), 0);
	fdr_trace_close(t);

	cr_expect(strstr(b.data, "/* CTF 1.8 */") == b.data, "no CTF 1.8 magic comment");
	cr_expect(strstr(b.data, "uuid = \"01020300-0000-0000-0000-000000000000\";"));
	cr_expect(strstr(b.data, "name = \"sys:struct _q_ _ __\";"), "event name: %s", b.data);
	cr_expect(strstr(b.data, "signed = true; encoding = none; base = 10; } _align;"));
	cr_expect(strstr(b.data, "size = 64; align = 8; signed = false; encoding = none; "
				 "base = 10; } _a_b;"));
	/* bool: an unsigned 8-bit integer; the second a_b gets _2 */
	cr_expect(strstr(b.data, "size = 8; align = 8; signed = false; encoding = none; "
				 "base = 10; } _a_b_2;"));
	/* the user field keeps its name; the array's length field moves aside */
	cr_expect(strstr(b.data, "} __blob_length;"));
	cr_expect(strstr(b.data, "} __blob_length_2;"));
	cr_expect(strstr(b.data, "base = 16; } _blob[__blob_length_2];"), "%s", b.data);
	cr_expect(strstr(b.data, "encoding = UTF8; base = 10; } _name[16];"));
	cr_expect(strstr(b.data, "size = 64; align = 8; signed = false; encoding = none; "
				 "base = 16; } _ip;"));
	cr_expect(strstr(b.data, "base = 16; } _caller[4];"));
	/* never a bare keyword or forbidden byte as a field identifier */
	cr_expect_null(strstr(b.data, " align;"));
	cr_expect_null(strstr(b.data, "a-b"));
	cr_expect_null(strstr(b.data, "\xc3"));
	fdr_buf_free(&b);
}
