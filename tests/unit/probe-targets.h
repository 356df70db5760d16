/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * probe-targets.h - the functions of probe-targets.S (each with its end, and
 * labels inside), and for the ones both test-probe-engine.c and
 * test-probe-jump.c run probed: c_X(i) calls pt_X with arguments made from i,
 * w_X(i) is what it must return.
 */
#ifndef FDR_TEST_PROBE_TARGETS_H
#define FDR_TEST_PROBE_TARGETS_H

#include <stdint.h>

uint64_t pt_add(uint64_t a, uint64_t b);
uint32_t pt_riprel(void);
uint32_t *pt_riprel_store(uint32_t v);
uint64_t pt_call(uint64_t x);
uint64_t pt_call_ra(void);
uint64_t pt_callind(void *fn, uint64_t x);
uint64_t pt_helper_si(uint64_t unused, uint64_t x);
uint64_t pt_callind_mem(void);
uint64_t pt_jmp(uint64_t x);
uint64_t pt_jmp32(uint64_t x);
uint64_t pt_jcc(uint64_t x);
uint64_t pt_jcc32(uint64_t x);
uint64_t pt_redzone(uint64_t a);
uint64_t pt_push(uint64_t x);
uint64_t pt_slow(const uint64_t *p, uint64_t x);
uint64_t pt_own_int3(void);
uint64_t pt_nop(void);
uint64_t pt_nop5(void);
uint64_t pt_loop(uint64_t n);
uint64_t pt_jtable(uint64_t i);
double pt_addsd(double a, double b);
void pt_vaddpd(double *p);
long pt_sys(long a1, long a2, long a3, long nr);
void pt_allregs(void);
uint64_t pt_regs_back(void);
uint64_t pt_ret_regs_back(void);
void pt_ret_regs(void);
uint64_t pt_flags(uint64_t flags);
int64_t pt_stack_args(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g,
		      int64_t h);
extern char pt_add_end[], pt_riprel_end[], pt_riprel_store_end[], pt_call_end[], pt_call_ra_end[],
	pt_callind_end[], pt_callind_mem_end[], pt_jmp_end[], pt_jmp32_end[], pt_jcc_end[],
	pt_jcc32_end[], pt_redzone_end[], pt_push_end[], pt_slow_end[], pt_nop_end[], pt_nop5_end[],
	pt_loop_end[], pt_jtable_end[], pt_addsd_end[], pt_vaddpd_end[], pt_sys_end[],
	pt_allregs_end[], pt_flags_end[], pt_regs_back_end[], pt_regs_back_probe[],
	pt_ret_regs_end[], pt_stack_args_end[];
extern char pt_flags_probe[], pt_allregs_probe[], pt_riprel_lea[], pt_jcc_br[], pt_jcc32_br[],
	pt_redzone_mid[], pt_push_pop[], pt_vaddpd_add[];
extern uint64_t pt_saved_sp;
extern uint32_t pt_global, pt_global2;

#define A(f) ((uintptr_t)(void *)(f))

static uint64_t c_add(uint64_t i)
{
	return pt_add(i, 2 * i);
}
static uint64_t w_add(uint64_t i)
{
	return 3 * i;
}
static uint64_t c_riprel(uint64_t i)
{
	pt_global = (uint32_t)i;
	return pt_riprel();
}
static uint64_t w_riprel(uint64_t i)
{
	return (uint32_t)i;
}
static uint64_t c_store(uint64_t i)
{
	uint32_t *p = pt_riprel_store((uint32_t)i + 1);

	return p == &pt_global2 ? pt_global2 : 0;
}
static uint64_t w_store(uint64_t i)
{
	return (uint32_t)i + 1;
}
static uint64_t c_call(uint64_t i)
{
	return pt_call(i);
}
static uint64_t w_call(uint64_t i)
{
	return i + 101;
}
static uint64_t c_call_ra(uint64_t i)
{
	(void)i;
	return pt_call_ra();
}
static uint64_t w_call_ra(uint64_t i)
{
	(void)i;
	return A(pt_call_ra) + 5; /* the original return address, not the trampoline's */
}
static uint64_t c_callind(uint64_t i)
{
	return pt_callind((void *)pt_helper_si, i);
}
static uint64_t w_callind(uint64_t i)
{
	return i + 201;
}
static uint64_t c_callind_mem(uint64_t i)
{
	(void)i;
	return pt_callind_mem();
}
static uint64_t w_callind_mem(uint64_t i)
{
	(void)i;
	return A(pt_callind_mem) + 6;
}
static uint64_t c_jmp(uint64_t i)
{
	return pt_jmp(i);
}
static uint64_t w_jmp(uint64_t i)
{
	return i + 7;
}
static uint64_t c_jmp32(uint64_t i)
{
	return pt_jmp32(i);
}
static uint64_t w_jmp32(uint64_t i)
{
	return i + 9;
}
static uint64_t c_jcc(uint64_t i)
{
	return pt_jcc(i % 20);
}
static uint64_t w_jcc(uint64_t i)
{
	return i % 20 < 10 ? 2 : 1;
}
static uint64_t c_jcc32(uint64_t i)
{
	return pt_jcc32(i % 3);
}
static uint64_t w_jcc32(uint64_t i)
{
	return i % 3 == 0 ? 3 : 4;
}
static uint64_t c_redzone(uint64_t i)
{
	return pt_redzone(i);
}
static uint64_t w_redzone(uint64_t i)
{
	return i + 5;
}
static uint64_t c_push(uint64_t i)
{
	return pt_push(i);
}
static uint64_t w_push(uint64_t i)
{
	return i + 3;
}

#endif /* FDR_TEST_PROBE_TARGETS_H */
