/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * numbers.h - decimal digits without printf, for the per-record path of the text
 * formats (lib/read/format.c): a line of the trace file is mostly numbers, and
 * snprintf() of each cost more than the rest of the line. All inline: these run
 * once or more per field of every record shown. Never installed.
 */
#ifndef FDR_COMMON_NUMBERS_H
#define FDR_COMMON_NUMBERS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/strbuf.h"

/* "00".."99": two decimal digits at a time */
static const char fb_pairs[201] = "00010203040506070809101112131415161718192021222324"
				  "25262728293031323334353637383940414243444546474849"
				  "50515253545556575859606162636465666768697071727374"
				  "75767778798081828384858687888990919293949596979899";

/* @v < 100: exactly two digits at @d */
static inline void fb_2digits(char *d, uint32_t v)
{
	memcpy(d, fb_pairs + v * 2, 2);
}

/* @v < 10^4: exactly four digits at @d */
static inline void fb_4digits(char *d, uint32_t v)
{
	fb_2digits(d, v / 100u);
	fb_2digits(d + 2, v % 100u);
}

/*
 * @v < 10^8: exactly eight digits at @d. The four pairs come from two independent
 * halves, so the divisions (multiplications) overlap instead of forming one chain.
 */
static inline void fb_8digits(char *d, uint32_t v)
{
	fb_4digits(d, v / 10000u);
	fb_4digits(d + 4, v % 10000u);
}

/*
 * Decimal digits of @v written backwards from @end; returns the start. Each
 * quotient is taken from @v itself where it can be (v / 10^8 and v / 10^16 side
 * by side, not one after the other), so the multiplications overlap.
 */
static inline char *fb_digits(uint64_t v, char *end)
{
	char *p = end;
	uint32_t w;

	if (v >= 100000000u) {
		uint64_t q8 = v / 100000000u;

		p -= 8;
		fb_8digits(p, (uint32_t)(v - q8 * 100000000u));
		if (q8 >= 100000000u) {
			uint64_t q16 = v / 10000000000000000ull; /* < 1845: four digits at most */

			p -= 8;
			fb_8digits(p, (uint32_t)(q8 - q16 * 100000000u));
			w = (uint32_t)q16;
		} else {
			w = (uint32_t)q8;
		}
	} else {
		w = (uint32_t)v;
	}
	/* w < 10^8 */
	if (w >= 10000u) {
		uint32_t q = w / 10000u;

		p -= 4;
		fb_4digits(p, w - q * 10000u);
		w = q;
	}
	/* w < 10^4 */
	if (w >= 100u) {
		uint32_t q = w / 100u;

		p -= 2;
		fb_2digits(p, w - q * 100u);
		w = q;
	}
	if (w >= 10u) {
		p -= 2;
		fb_2digits(p, w);
	} else {
		*--p = (char)('0' + w);
	}
	return p;
}

/* @s right-aligned (pad on the left) or left-aligned in @width columns. */
static inline int fb_pad(struct fdr_buf *b, const char *s, size_t len, size_t width, int left)
{
	static const char spaces[] = "                                ";
	size_t pad = len < width ? width - len : 0;
	int ret = 0;

	if (left)
		ret |= fb_add(b, s, len);
	while (pad) {
		size_t n = pad < sizeof(spaces) - 1 ? pad : sizeof(spaces) - 1;

		ret |= fb_add(b, spaces, n);
		pad -= n;
	}
	if (!left)
		ret |= fb_add(b, s, len);
	return ret;
}

/*
 * Unchecked writers for the per-record path: the caller reserved room for the
 * worst case first (fdr_buf_reserve()), so each returns the new end without checks.
 */
/*
 * The number of decimal digits of @v. A tree of compares, not arithmetic: where
 * the next field goes depends on this count, so a computed count (bit length,
 * multiply, table load) sits on the line's critical path, while predicted
 * branches do not; a field's values mostly keep their width from record to record.
 */
static inline unsigned fb_dec_len(uint64_t v)
{
	if (v < 100000000ull) {
		if (v < 10000ull)
			return v < 100ull ? 1u + (v >= 10ull) : 3u + (v >= 1000ull);
		return v < 1000000ull ? 5u + (v >= 100000ull) : 7u + (v >= 10000000ull);
	}
	if (v < 10000000000000000ull) {
		if (v < 1000000000000ull)
			return v < 10000000000ull ? 9u + (v >= 1000000000ull) :
						    11u + (v >= 100000000000ull);
		return v < 100000000000000ull ? 13u + (v >= 10000000000000ull) :
						15u + (v >= 1000000000000000ull);
	}
	if (v < 1000000000000000000ull)
		return 17u + (v >= 100000000000000000ull);
	return 19u + (v >= 10000000000000000000ull);
}

static inline char *fb_put_u64(char *d, uint64_t v)
{
	unsigned n;

	/* the small values most fields hold, without counting digits */
	if (v < 10) {
		*d = (char)('0' + v);
		return d + 1;
	}
	if (v < 100) {
		fb_2digits(d, (uint32_t)v);
		return d + 2;
	}
	n = fb_dec_len(v);

	fb_digits(v, d + n);
	return d + n;
}

static inline char *fb_put_s64(char *d, int64_t v)
{
	if (v < 0) {
		*d++ = '-';
		return fb_put_u64(d, -(uint64_t)v);
	}
	return fb_put_u64(d, (uint64_t)v);
}

/* %0Nu, N <= 20 */
static inline char *fb_put_zpad(char *d, uint64_t v, unsigned width)
{
	unsigned n = fb_dec_len(v);

	while (n < width) {
		*d++ = '0';
		width--;
	}
	fb_digits(v, d + n);
	return d + n;
}

#endif /* FDR_COMMON_NUMBERS_H */
