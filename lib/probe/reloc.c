// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * reloc.c - displaced instructions: decoded once, then relocated or emulated.
 *
 * A probe replaces the first byte of an instruction (int3, issue 15) or the
 * first 5+ bytes of a run of instructions (jmp rel32, issue 16). What was
 * there must still happen, somewhere else. fdr_reloc_decode() decodes the
 * instruction with Zydis once, when the probe is armed, and sorts it:
 *
 *	kind       examples                   how it runs away from home
 *	COPY       mov/add/push/pop/ret/...   byte for byte; a RIP-relative
 *	           mov foo(%rip),%eax         disp32 rewritten for the new place
 *	JMP        jmp rel8/rel32             RIP = target
 *	JCC        jne rel8/rel32             RIP = cond(EFLAGS) ? target : next
 *	CALL       call rel32                 push next; RIP = target
 *	CALL_IND   call *%rax, call *8(%rip)  push next; jmp with the same operand
 *	(refused)  int3, loop, jrcxz, xbegin, far calls, call *(%rsp...),
 *	           32-bit RIP-relative (0x67): -ENOTSUP, the probe is not armed
 *
 * The breakpoint handler emulates JMP, JCC and CALL itself: it has the
 * registers in the ucontext, so a branch costs nothing out of line, and the
 * return address a CALL pushes is the original one (addr + len), never a copy's:
 * code that reads its return address (PIC thunks, unwinders, longjmp) sees no
 * difference. COPY and CALL_IND run from a slot written by fdr_reloc_emit().
 *
 * fdr_reloc_emit() writes any kind as straight-line code that ends where the
 * original would have continued, for a given address 'at' of the copy:
 *
 *	COPY      <insn, disp32 += old_addr - at>        jmp resume
 *	JMP       jmp target
 *	JCC       j<cc> +N ; jmp resume ; N: jmp target
 *	CALL      push $lo32(next) ; movl $hi32(next),4(%rsp) ; jmp target
 *	CALL_IND  push $lo32(next) ; movl $hi32(next),4(%rsp) ; jmp <operand>
 *
 * "jmp X" is a jmp rel32 when X is within ±2 GiB of the copy, else
 * jmp *0(%rip) followed by the 8-byte address. push/movl leave EFLAGS alone,
 * so every form is exact: same registers, flags, memory and stack as the
 * original. The jump optimiser's trampolines (issue 16) are the same output,
 * one instruction after another (resume = the next copy), so both forms share
 * one decoder and one set of rules about what can be moved; the breakpoint
 * tests run every kind through both the emulation and this emitter.
 *
 * A RIP-relative operand can only move within ±2 GiB of what it refers to:
 * the slot must be allocated near the code (lib/probe/patch.c), and emit()
 * returns -ERANGE when it is not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "reloc.h"

static int rl_decoder(ZydisDecoder *d)
{
	return ZYAN_SUCCESS(ZydisDecoderInit(d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) ?
		       0 :
		       -EINVAL;
}

/**
 * fdr_reloc_length - the length of the instruction at @code
 * @code: bytes to decode (a copy: probed bytes already put back)
 * @avail: how many bytes @code holds
 * @mnemonic: where its mnemonic is written ("?" if it does not decode), or NULL
 * @n: size of @mnemonic
 *
 * Returns: its length (1..15), or -EILSEQ if the bytes are not an instruction.
 */
int fdr_reloc_length(const uint8_t *code, size_t avail, char *mnemonic, size_t n)
{
	ZydisDecoder d;
	ZydisDecodedInstruction in;

	if (rl_decoder(&d) < 0)
		return -EINVAL;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&d, NULL, code, avail, &in))) {
		if (mnemonic && n)
			snprintf(mnemonic, n, "?");
		return -EILSEQ;
	}
	if (mnemonic && n)
		snprintf(mnemonic, n, "%s", ZydisMnemonicGetString(in.mnemonic));
	return in.length;
}

static int rl_refuse(char *why, size_t n, uintptr_t addr, const char *mn, const char *reason)
{
	if (why && n)
		snprintf(why, n, "cannot relocate '%s' at 0x%lx: %s", mn, (unsigned long)addr,
			 reason);
	return -ENOTSUP;
}

/**
 * fdr_reloc_decode - decode and classify the instruction a probe displaces
 * @addr: its address in the program
 * @code: its bytes (the original ones, not a probe's int3)
 * @avail: how many bytes @code holds (at most 15 are read)
 * @out: filled on success
 * @why: on failure, a message naming the instruction and the reason
 * @n: size of @why
 *
 * Returns: 0; -EILSEQ if @code is not an instruction; -ENOTSUP if it cannot be
 * moved (the table in the essay above). Not async-signal-safe (Zydis).
 */
int fdr_reloc_decode(uintptr_t addr, const uint8_t *code, size_t avail, struct fdr_reloc_insn *out,
		     char *why, size_t n)
{
	ZydisDecoder d;
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	const ZydisDecodedOperand *imm = NULL;
	const char *mn;
	ZyanU64 abs;
	int i;

	if (rl_decoder(&d) < 0)
		return -EINVAL;
	if (avail > FDR_RELOC_MAX_LEN)
		avail = FDR_RELOC_MAX_LEN;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&d, code, avail, &in, ops))) {
		if (why && n)
			snprintf(why, n, "bytes at 0x%lx do not decode as an instruction",
				 (unsigned long)addr);
		return -EILSEQ;
	}
	memset(out, 0, sizeof(*out));
	out->addr = addr;
	out->len = in.length;
	memcpy(out->bytes, code, in.length);
	out->disp_off = -1;
	out->modrm_off = -1;
	mn = ZydisMnemonicGetString(in.mnemonic);
	snprintf(out->mnemonic, sizeof(out->mnemonic), "%s", mn);

	switch (in.mnemonic) {
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INTO:
		return rl_refuse(why, n, addr, mn, "a trap instruction");
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_XBEGIN:
		return rl_refuse(why, n, addr, mn, "a relative branch fdr does not relocate");
	default:
		break;
	}

	/* A RIP-relative memory operand: rewrite its disp32 wherever the copy goes. */
	for (i = 0; i < in.operand_count; i++) {
		if (ops[i].type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    ops[i].mem.base != ZYDIS_REGISTER_RIP)
			continue;
		if (in.address_width != 64 || in.raw.disp.size != 32)
			return rl_refuse(why, n, addr, mn, "RIP-relative with a 32-bit address");
		if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, &ops[i], addr, &abs)))
			return rl_refuse(why, n, addr, mn, "RIP-relative address not computable");
		out->disp_off = (int8_t)in.raw.disp.offset;
		out->rip_ref = (uintptr_t)abs;
	}

	/* IS_RELATIVE covers RIP-relative memory too; a relative immediate is a branch */
	for (i = 0; i < in.operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[i].imm.is_relative)
			imm = &ops[i];
	if (!imm && (in.attributes & ZYDIS_ATTRIB_IS_RELATIVE) && out->disp_off < 0)
		return rl_refuse(why, n, addr, mn, "a relative operand fdr does not know");
	if (imm) {
		if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&in, imm, addr, &abs)))
			return rl_refuse(why, n, addr, mn, "branch target not computable");
		out->target = (uintptr_t)abs;
		switch (in.meta.category) {
		case ZYDIS_CATEGORY_UNCOND_BR:
			out->kind = FDR_RELOC_JMP;
			return 0;
		case ZYDIS_CATEGORY_COND_BR:
			out->kind = FDR_RELOC_JCC;
			out->cond = in.opcode & 0xf;
			return 0;
		case ZYDIS_CATEGORY_CALL:
			out->kind = FDR_RELOC_CALL;
			return 0;
		default:
			return rl_refuse(why, n, addr, mn,
					 "a relative branch fdr does not relocate");
		}
	}

	if (in.meta.category == ZYDIS_CATEGORY_CALL) {
		/* call r/m64 (FF /2): anything else (far calls) is refused. */
		if (in.opcode != 0xff || in.raw.modrm.reg != 2 ||
		    in.opcode_map != ZYDIS_OPCODE_MAP_DEFAULT)
			return rl_refuse(why, n, addr, mn, "not a near call");
		for (i = 0; i < in.operand_count; i++) {
			if (ops[i].visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT)
				continue;
			/* The push would move %rsp under the operand's feet. */
			if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
			    (ops[i].mem.base == ZYDIS_REGISTER_RSP ||
			     ops[i].mem.index == ZYDIS_REGISTER_RSP))
				return rl_refuse(why, n, addr, mn, "an indirect call through %rsp");
			if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			    ops[i].reg.value == ZYDIS_REGISTER_RSP)
				return rl_refuse(why, n, addr, mn, "an indirect call through %rsp");
		}
		out->kind = FDR_RELOC_CALL_IND;
		out->modrm_off = (int8_t)in.raw.modrm.offset;
		return 0;
	}
	out->kind = FDR_RELOC_COPY;
	return 0;
}

static int rl_fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* jmp to @to from code written at @at: rel32 where it reaches, else jmp *0(%rip). */
static size_t rl_jmp(uint8_t *p, uintptr_t at, uintptr_t to)
{
	int64_t rel = (int64_t)(to - (at + 5));
	int32_t r32;

	if (rl_fits32(rel)) {
		r32 = (int32_t)rel;
		p[0] = 0xe9;
		memcpy(p + 1, &r32, 4);
		return 5;
	}
	p[0] = 0xff;
	p[1] = 0x25;
	memset(p + 2, 0, 4);
	memcpy(p + 6, &to, 8);
	return 14;
}

/* push $lo32(ret) ; movl $hi32(ret),4(%rsp): a call's push, flags untouched. */
static size_t rl_push_ret(uint8_t *p, uint64_t ret)
{
	uint32_t lo = (uint32_t)ret, hi = (uint32_t)(ret >> 32);

	p[0] = 0x68;
	memcpy(p + 1, &lo, 4);
	p[5] = 0xc7;
	p[6] = 0x44;
	p[7] = 0x24;
	p[8] = 0x04;
	memcpy(p + 9, &hi, 4);
	return 13;
}

/**
 * fdr_reloc_emit - write code that does what @in does, to run at address @at
 * @in: from fdr_reloc_decode()
 * @at: the address the code will run at
 * @resume: where to continue afterwards (addr + len for a single instruction;
 *          the next relocated instruction in a trampoline)
 * @buf: the bytes (written, not executed, here)
 * @size: room in @buf; FDR_RELOC_SLOT_MAX always suffices
 *
 * Returns: the number of bytes written; -ERANGE if a RIP-relative operand cannot
 * reach its target from @at; -ENOSPC if @size is too small; -EINVAL for a bad @in.
 */
int fdr_reloc_emit(const struct fdr_reloc_insn *in, uintptr_t at, uintptr_t resume, uint8_t *buf,
		   size_t size)
{
	uint8_t tmp[64];
	size_t len = 0;
	uintptr_t next = in->addr + in->len;
	int64_t disp;
	int32_t d32;

	if (in->len == 0 || in->len > FDR_RELOC_MAX_LEN)
		return -EINVAL;
	switch (in->kind) {
	case FDR_RELOC_COPY:
	case FDR_RELOC_CALL_IND:
		if (in->kind == FDR_RELOC_CALL_IND)
			len = rl_push_ret(tmp, next);
		memcpy(tmp + len, in->bytes, in->len);
		if (in->kind == FDR_RELOC_CALL_IND) {
			if (in->modrm_off < 0 || in->modrm_off >= in->len)
				return -EINVAL;
			/* FF /2 (call r/m64) becomes FF /4 (jmp r/m64) */
			tmp[len + in->modrm_off] =
				(uint8_t)((tmp[len + in->modrm_off] & ~0x38) | 0x20);
		}
		if (in->disp_off >= 0) {
			if (in->disp_off + 4 > in->len)
				return -EINVAL;
			disp = (int64_t)(in->rip_ref - (at + len + in->len));
			if (!rl_fits32(disp))
				return -ERANGE;
			d32 = (int32_t)disp;
			memcpy(tmp + len + in->disp_off, &d32, 4);
		}
		len += in->len;
		if (in->kind == FDR_RELOC_COPY)
			len += rl_jmp(tmp + len, at + len, resume);
		break;
	case FDR_RELOC_JMP:
		len = rl_jmp(tmp, at, in->target);
		break;
	case FDR_RELOC_JCC: {
		size_t j;

		/* j<cc> over the "not taken" jmp, whose size we learn by writing it */
		j = rl_jmp(tmp + 2, at + 2, resume);
		tmp[0] = (uint8_t)(0x70 | (in->cond & 0xf));
		tmp[1] = (uint8_t)j;
		len = 2 + j;
		len += rl_jmp(tmp + len, at + len, in->target);
		break;
	}
	case FDR_RELOC_CALL:
		len = rl_push_ret(tmp, next);
		len += rl_jmp(tmp + len, at + len, in->target);
		break;
	default:
		return -EINVAL;
	}
	if (len > size)
		return -ENOSPC;
	memcpy(buf, tmp, len);
	return (int)len;
}

/**
 * fdr_reloc_cond_true - whether a jcc with condition @cond is taken
 * @cond: the low 4 bits of the opcode (0 = jo ... 0xf = jg)
 * @eflags: the flags the branch sees
 *
 * Returns: 1 if taken, 0 if not. Async-signal-safe.
 */
int fdr_reloc_cond_true(unsigned int cond, uint64_t eflags)
{
	int cf = !!(eflags & 0x1), pf = !!(eflags & 0x4), zf = !!(eflags & 0x40);
	int sf = !!(eflags & 0x80), of = !!(eflags & 0x800);
	int r;

	switch ((cond >> 1) & 7) {
	case 0: /* jo */
		r = of;
		break;
	case 1: /* jb */
		r = cf;
		break;
	case 2: /* je */
		r = zf;
		break;
	case 3: /* jbe */
		r = cf || zf;
		break;
	case 4: /* js */
		r = sf;
		break;
	case 5: /* jp */
		r = pf;
		break;
	case 6: /* jl */
		r = sf != of;
		break;
	default: /* jle */
		r = zf || (sf != of);
		break;
	}
	return (cond & 1) ? !r : r;
}
