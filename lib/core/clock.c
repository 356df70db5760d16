// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clock.c - timestamps and trace clocks.
 *
 * Writers store raw timestamps: rdtsc where the TSC is invariant (constant_tsc and
 * nonstop_tsc), CLOCK_MONOTONIC nanoseconds otherwise (control.ts_source says
 * which). Readers convert to the instance's trace_clock. For TSC stamps every
 * sub-buffer header carries a calibration point (tsc, mono, boot) taken when the
 * sub-buffer began (reused by a thread for up to ~1 ms); a record converts from
 * its sub-buffer's point with the TSC rate measured once, over 50 ms, when the
 * session was created. Using only stored data, a record converts to the same
 * time on every read, after every writer is gone, and on another machine; the
 * rate's error (a few 1e-7) only scales the distance to the point. Clocks:
 *   local, global, perf, mono  CLOCK_MONOTONIC ns
 *   mono_raw, tai              CLOCK_MONOTONIC ns (approximations)
 *   boot                       CLOCK_BOOTTIME ns
 *   x86-tsc, counter           the raw stamp, printed as a number
 *   uptime                     10 ms ticks of CLOCK_MONOTONIC
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core-local.h"

static uint64_t ck_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t fdr_clock_mono_ns(void)
{
	return ck_ns(CLOCK_MONOTONIC);
}

uint64_t fdr_clock_boot_ns(void)
{
	return ck_ns(CLOCK_BOOTTIME);
}

uint64_t fdr_clock_real_ns(void)
{
	return ck_ns(CLOCK_REALTIME);
}

/* Nonzero if rdtsc gives a constant-rate counter that keeps running (x86 only). */
int fdr_clock_tsc_usable(void)
{
#if defined(__x86_64__)
	char line[4096];
	FILE *f;
	int constant = 0, nonstop = 0;
	const char *env = getenv("FDR_CLOCK_SOURCE");

	if (env && strcmp(env, "mono") == 0)
		return 0;
	f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
#else
	return 0;
#endif
}

/*
 * @inner read between two CLOCK_MONOTONIC reads, and again while the two are
 * 1 us apart or more, up to 8 times: the tightest try's value into *@val, the
 * midpoint of its monotonic reads into *@mid. Returns its width, UINT64_MAX if
 * no try saw the monotonic clock go forward (*@val and *@mid untouched).
 */
static uint64_t ck_bracket(uint64_t (*inner)(void), uint64_t *val, uint64_t *mid)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 8 && best >= 1000; i++) {
		uint64_t m0 = fdr_clock_mono_ns(), v = inner(), m1 = fdr_clock_mono_ns();

		if (m1 >= m0 && m1 - m0 < best) {
			best = m1 - m0;
			*val = v;
			*mid = m0 + (m1 - m0) / 2;
		}
	}
	return best;
}

/**
 * fdr_clock_point - a calibration point: the TSC, CLOCK_MONOTONIC and
 * CLOCK_BOOTTIME at (nearly) one instant. The TSC is read between two
 * monotonic reads, and the monotonic time is their midpoint; the pair is read
 * again while the two are 1 us apart or more (a first call of a clock, a
 * preemption, a stolen virtual CPU), up to 8 times, and the tightest pair is
 * kept (not the last: under load every try may be wide, and a point off by
 * microseconds puts a whole sub-buffer's records out of order against the
 * kernel's on a merged timeline, docs/design/kernel-timeline.md). The boot
 * clock's offset from the monotonic one is taken the same way, on its own
 * (ck_bracket()).
 */
void fdr_clock_point(uint64_t *tsc, uint64_t *mono, uint64_t *boot)
{
	uint64_t b = 0, mid = 0, off = 0;

	if (ck_bracket(fdr_rdtsc, tsc, mono) == UINT64_MAX) { /* the clock went back */
		*tsc = fdr_rdtsc();
		*mono = fdr_clock_mono_ns();
	}
	/* boot >= mono; equal without a suspend */
	if (ck_bracket(fdr_clock_boot_ns, &b, &mid) != UINT64_MAX && b > mid)
		off = b - mid;
	*boot = *mono + off;
}

/* This boot's id (36 characters), "" if unknown. */
void fdr_clock_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/*
 * One (tsc, mono) pair, read so that the TSC reads bracket the clock read as
 * tightly as possible: the best of a few tries, the midpoint of the bracket.
 */
static void ck_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;
	int i;

	*tsc = fdr_rdtsc();
	*mono = fdr_clock_mono_ns();

	for (i = 0; i < 16; i++) {
		uint64_t a = fdr_rdtsc(), m = fdr_clock_mono_ns(), b = fdr_rdtsc();

		if (b > a && b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*mono = m;
		}
	}
}

/*
 * Measure the TSC rate against CLOCK_MONOTONIC over 50 ms. The rate is fixed for
 * the session's life, so a record converts to the same time on every read, on
 * any machine; each sub-buffer carries its own (tsc, mono) point, so the rate's
 * error (a few 1e-7) only scales the distance to that point.
 */
uint64_t fdr_clock_calibrate_khz(void)
{
	uint64_t t0, c0, t1, c1;
	struct timespec d = { 0, 50 * 1000 * 1000 };

	ck_pair(&c0, &t0);
	nanosleep(&d, NULL);
	ck_pair(&c1, &t1);
	if (t1 <= t0 || c1 <= c0)
		return 0;
	return (uint64_t)((long double)(c1 - c0) * 1000000.0L / (long double)(t1 - t0) + 0.5L);
}

/**
 * fdr_clock_conv_init - prepare conversion of raw stamps to a trace clock
 * @c: converter to fill
 * @ctl: the session's control block (its creation calibration point)
 * @clock: enum fdr_abi_clock
 *
 * Uses only what the session stores, so a record converts to the same time on
 * every read, after every writer is gone, or on another machine.
 */
void fdr_clock_conv_init(struct fdr_clock_conv *c, const struct fdr_abi_control *ctl,
			 uint32_t clock)
{
	uint64_t khz = __atomic_load_n(&ctl->tsc_khz, __ATOMIC_RELAXED); /* read once: shared */

	memset(c, 0, sizeof(*c));
	c->clock = clock < FDR_CLOCK_NR ? clock : FDR_CLOCK_LOCAL;
	c->ts_source = ctl->ts_source;
	c->ref_tsc = ctl->cal_tsc;
	c->ref_mono_ns = ctl->cal_mono_ns;
	c->ref_boot_ns = ctl->cal_boot_ns;
	if (khz)
		c->ns_per_tick = 1000000.0L / (long double)khz;
	else
		c->ns_per_tick = 1.0L;
	c->mult = (uint64_t)(c->ns_per_tick * 4294967296.0L + 0.5L);
}

/**
 * fdr_clock_conv - convert a raw record stamp
 * @c: converter
 * @raw: the record's timestamp
 * @cal: the calibration point of the record's sub-buffer, or NULL for the session's
 *
 * Returns the stamp in the clock's unit (ns, or raw ticks for x86-tsc/counter).
 */
uint64_t fdr_clock_conv(const struct fdr_clock_conv *c, uint64_t raw,
			const struct fdr_abi_subbuf *cal)
{
	uint64_t mono, boot_off, ref_tsc, ref_mono;
	long double d;

	if (c->clock == FDR_CLOCK_X86_TSC || c->clock == FDR_CLOCK_COUNTER)
		return raw;
	if (c->ts_source == FDR_TS_MONO) {
		mono = raw;
		boot_off = c->ref_boot_ns - c->ref_mono_ns;
		if (cal && cal->cal_boot_ns >= cal->cal_mono_ns)
			boot_off = cal->cal_boot_ns - cal->cal_mono_ns;
	} else {
		ref_tsc = c->ref_tsc;
		ref_mono = c->ref_mono_ns;
		boot_off = c->ref_boot_ns - c->ref_mono_ns;
		/* a calibration point is used only if it looks sane (hostile memory) */
		/* any sane point: a session on disk may be written again after a reboot */
		if (cal && cal->cal_tsc && cal->cal_boot_ns >= cal->cal_mono_ns) {
			ref_tsc = cal->cal_tsc;
			ref_mono = cal->cal_mono_ns;
			boot_off = cal->cal_boot_ns - cal->cal_mono_ns;
		}
		if (raw >= ref_tsc) {
			/* 32.32 fixed point: exact enough (2^-32 ns per tick) and fast */
			unsigned __int128 x = (unsigned __int128)(raw - ref_tsc) * c->mult;

			mono = ref_mono + (uint64_t)(x >> 32);
		} else {
			d = ((long double)raw - (long double)ref_tsc) * c->ns_per_tick;
			mono = d < -(long double)ref_mono ?
				       0 :
				       (uint64_t)((long double)ref_mono + d + 0.5L);
		}
	}
	switch (c->clock) {
	case FDR_CLOCK_BOOT:
		return mono + boot_off;
	case FDR_CLOCK_UPTIME:
		return mono / 10000000ull;
	default:
		return mono;
	}
}

/* The lease clock's multiplier for a session (see core-local.h); 0: CLOCK_MONOTONIC. */
uint64_t fdr_lease_mult(const struct fdr_abi_control *ctl)
{
	uint64_t khz = __atomic_load_n(&ctl->tsc_khz, __ATOMIC_RELAXED);

	if (ctl->ts_source != FDR_TS_TSC || khz < 1000 || khz > 100000000)
		return 0;
	return (uint64_t)((1000000ull << 32) / khz);
}

/**
 * fdr_session_lease_ns - now, on the session's lease clock (the clock of the ring
 * header's snap_lock_ns, saver_beat_ns and swap_ns; see core-local.h)
 */
uint64_t fdr_session_lease_ns(struct fdr_session *s)
{
	return fdr_lease_ns(fdr_lease_mult(s->ctl));
}

/** fdr_clock_now - the current time on the converter's clock */
uint64_t fdr_clock_now(const struct fdr_clock_conv *c)
{
	if (c->ts_source == FDR_TS_TSC)
		return fdr_clock_conv(c, fdr_rdtsc(), NULL);
	return fdr_clock_conv(c, fdr_clock_mono_ns(), NULL);
}

/** fdr_clock_is_ns - whether a clock prints as seconds.microseconds */
int fdr_clock_is_ns(uint32_t clock)
{
	return !(clock == FDR_CLOCK_X86_TSC || clock == FDR_CLOCK_COUNTER ||
		 clock == FDR_CLOCK_UPTIME);
}
