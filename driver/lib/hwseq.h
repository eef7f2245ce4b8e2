/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * hwseq.h - the register programming sequence of docs/registers.md, written
 * once for user space and the kernel.
 *
 * driver/lib/hwregs.c (tsim, XRT) and driver/linux/loom_hw.c (a board,
 * through loom.ko) both call these steps; what differs between them is only
 * the transport and how time passes:
 *
 *   - `struct loom_hwseq_io` reads and writes one 32-bit register at a byte
 *     offset (a Verilator AXI4-Lite transaction, readl/writel, the test
 *     device's register file);
 *   - `pause` runs between two polls of a bounded wait (CTRL.IDLE before a
 *     start, after a SOFT_RESET): tsim lets simulated cycles pass and gives
 *     up after a number of polls, the kernel sleeps and gives up after a
 *     time.  Only probe/start/reset wait; done, ack and collect never call
 *     pause, so the kernel may call them in its interrupt handler.
 *
 * The header is kernel-safe: fixed-width types from <linux/types.h> or
 * <stdint.h>, no libc, no allocation, no messages.  A step returns an
 * `enum loom_hwseq_status`; the caller words the error (loom_fail() in user
 * space, dev_err() and an errno in the kernel).  The register offsets, the
 * CTRL and ISR/IER bits and the configuration hashes come from
 * hw/spec/ through the generated loom_isa_gen.h.
 *
 * The decisions the sequence keeps (docs/registers.md says why, from the
 * RTL's loom_ctrl.v):
 *
 *   - completion is read from ISR.DONE, never from CTRL.DONE: CTRL.DONE is
 *     clear-on-read, so whoever reads CTRL first (an idle wait, XRT's
 *     scheduler, a debugger) consumes it; ISR.DONE is a latch that only a
 *     write of 1 clears, so every poller may look at it;
 *   - IER = DONE is written at every start, before START, with or without
 *     an interrupt line: ISR latches DONE only while IER is set when the
 *     job ends, and polling needs the latch too.  GIE alone decides whether
 *     the line is driven;
 *   - collect reads CTRL once (the ap_ctrl_hs acknowledge: it clears this
 *     job's DONE and READY), then ERR_STATUS, ERR_INSN and the counters,
 *     and acknowledges ISR last with a read-back, so that a level-sensitive
 *     line is low before an interrupt handler returns;
 *   - 64-bit registers are two words, low word first (the RTL snapshots a
 *     counter's high word when its low word is read).
 */
#ifndef LOOM_HWSEQ_H
#define LOOM_HWSEQ_H

#ifdef __KERNEL__
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#endif

#include "loom_isa_gen.h"

/* One entry of the segment table. */
struct loom_hw_segment {
	uint64_t base; /* bus address, 64-byte aligned */
	uint64_t size; /* bytes, 0 = unmapped */
};

struct loom_hwseq_io {
	void *ctx;
	uint32_t (*read)(void *ctx, uint32_t offset);
	/* Must order the CPU's earlier writes to DMA memory before the
	 * register write (writel, not writel_relaxed): START makes the
	 * accelerator fetch the job by DMA at once. */
	void (*write)(void *ctx, uint32_t offset, uint32_t value);
	/* Between polls of a bounded wait; `polls` counts the polls of this
	 * wait so far (0 first).  Lets time pass; false gives up. */
	bool (*pause)(void *ctx, uint32_t polls);
};

enum loom_hwseq_status {
	LOOM_HWSEQ_OK = 0,
	LOOM_HWSEQ_NOT_LOOM,    /* ID does not read LOOM_HW_ID */
	LOOM_HWSEQ_ISA_VERSION, /* VERSION[15:0] is not LOOM_ISA_VERSION */
	LOOM_HWSEQ_INSN_ALIGN,  /* instruction address not 16-byte aligned */
	LOOM_HWSEQ_SEG_ALIGN,   /* a mapped segment's base not 64-byte aligned */
	LOOM_HWSEQ_NOT_IDLE,    /* CTRL.IDLE stayed 0 (before START, after SOFT_RESET) */
	LOOM_HWSEQ_STATUS_COUNT
};

/* What the identification registers read. */
struct loom_hwseq_ident {
	uint32_t id, version, config_hash;
};

/* The status in words, for messages (a switch, so that a new status
 * without its text is a -Wswitch error). */
static inline const char *loom_hwseq_status_text(enum loom_hwseq_status s)
{
	switch (s) {
	case LOOM_HWSEQ_OK:
		return "ok";
	case LOOM_HWSEQ_NOT_LOOM:
		return "no Loom accelerator (ID register)";
	case LOOM_HWSEQ_ISA_VERSION:
		return "another ISA version";
	case LOOM_HWSEQ_INSN_ALIGN:
		return "instruction address not 16-byte aligned";
	case LOOM_HWSEQ_SEG_ALIGN:
		return "segment base not 64-byte aligned";
	case LOOM_HWSEQ_NOT_IDLE:
		return "accelerator not idle (CTRL.IDLE stays 0)";
	case LOOM_HWSEQ_STATUS_COUNT:
		break;
	}
	return "unknown";
}

/* ---- configurations by name and hash (hw/spec/loom_configs.def) ---- */

/* The name of the configuration with `hash`, or NULL. */
static inline const char *loom_hwseq_config_name(uint32_t hash)
{
#define LOOM_HWSEQ_NAME_IF(n, h) \
	if (hash == (h))         \
		return n;
	LOOM_CONFIG_LIST(LOOM_HWSEQ_NAME_IF)
#undef LOOM_HWSEQ_NAME_IF
	return NULL;
}

/* The hash of the configuration `name`, or 0. */
static inline uint32_t loom_hwseq_config_hash(const char *name)
{
#define LOOM_HWSEQ_HASH_IF(n, h) \
	if (!strcmp(name, n))    \
		return (h);
	LOOM_CONFIG_LIST(LOOM_HWSEQ_HASH_IF)
#undef LOOM_HWSEQ_HASH_IF
	return 0;
}

/* ---- register access ---- */

static inline uint32_t loom_hwseq_rd(const struct loom_hwseq_io *io, uint32_t off)
{
	return io->read(io->ctx, off);
}

static inline void loom_hwseq_wr(const struct loom_hwseq_io *io, uint32_t off, uint32_t v)
{
	io->write(io->ctx, off, v);
}

static inline uint64_t loom_hwseq_rd64(const struct loom_hwseq_io *io, uint32_t lo_off)
{
	uint64_t lo = loom_hwseq_rd(io, lo_off);
	uint64_t hi = loom_hwseq_rd(io, lo_off + 4);

	return lo | hi << 32;
}

static inline void loom_hwseq_wr64(const struct loom_hwseq_io *io, uint32_t lo_off, uint64_t v)
{
	loom_hwseq_wr(io, lo_off, (uint32_t)v);
	loom_hwseq_wr(io, lo_off + 4, (uint32_t)(v >> 32));
}

/* Polls CTRL.IDLE, pausing between polls, until it reads 1 (true) or the
 * caller's pause gives up (false).  Reading CTRL clears a stale DONE. */
static inline bool loom_hwseq_wait_idle(const struct loom_hwseq_io *io)
{
	uint32_t polls;

	for (polls = 0;; polls++) {
		if (loom_hwseq_rd(io, LOOM_REG_CTRL) & LOOM_CTRL_IDLE)
			return true;
		if (!io->pause(io->ctx, polls))
			return false;
	}
}

/* ---- the steps ---- */

/* Step 1: ID, VERSION and CONFIG_HASH into *out; NOT_LOOM or ISA_VERSION
 * when this is not an accelerator this code can drive.  The caller
 * compares the hash with what it expects. */
static inline enum loom_hwseq_status loom_hwseq_probe(const struct loom_hwseq_io *io,
						      struct loom_hwseq_ident *out)
{
	out->id = loom_hwseq_rd(io, LOOM_REG_ID);
	out->version = loom_hwseq_rd(io, LOOM_REG_VERSION);
	out->config_hash = loom_hwseq_rd(io, LOOM_REG_CONFIG_HASH);
	if (out->id != LOOM_HW_ID)
		return LOOM_HWSEQ_NOT_LOOM;
	if ((out->version & 0xffffu) != LOOM_ISA_VERSION)
		return LOOM_HWSEQ_ISA_VERSION;
	return LOOM_HWSEQ_OK;
}

/* The alignments the hardware relies on (it ignores the low address
 * bits): INSN_ALIGN, or SEG_ALIGN with the segment in *bad_seg. */
static inline enum loom_hwseq_status
loom_hwseq_check(uint64_t insn_addr, const struct loom_hw_segment seg[LOOM_NUM_SEGMENTS],
		 int *bad_seg)
{
	int s;

	if (insn_addr & 15)
		return LOOM_HWSEQ_INSN_ALIGN;
	for (s = 0; s < LOOM_NUM_SEGMENTS; s++) {
		if (seg[s].size && (seg[s].base & 63)) {
			*bad_seg = s;
			return LOOM_HWSEQ_SEG_ALIGN;
		}
	}
	return LOOM_HWSEQ_OK;
}

/* Steps 2-5: wait for idle, write the job's arguments and the segment
 * table (an unmapped segment as base 0, size 0), clear ISR, enable the
 * DONE latch (always) and the line (irq_line), and START last.  Nothing
 * is written unless the addresses are aligned and the device idle. */
static inline enum loom_hwseq_status
loom_hwseq_start(const struct loom_hwseq_io *io, uint64_t insn_addr, uint32_t insn_count,
		 const struct loom_hw_segment seg[LOOM_NUM_SEGMENTS], bool irq_line, int *bad_seg)
{
	enum loom_hwseq_status st = loom_hwseq_check(insn_addr, seg, bad_seg);
	uint32_t s;

	if (st != LOOM_HWSEQ_OK)
		return st;
	if (!loom_hwseq_wait_idle(io))
		return LOOM_HWSEQ_NOT_IDLE;
	loom_hwseq_wr64(io, LOOM_REG_INSN_ADDR_LO, insn_addr);
	loom_hwseq_wr(io, LOOM_REG_INSN_COUNT, insn_count);
	for (s = 0; s < LOOM_NUM_SEGMENTS; s++) {
		uint32_t off = s * LOOM_REG_SEG_STRIDE;

		loom_hwseq_wr64(io, LOOM_REG_SEG_BASE_LO + off, seg[s].size ? seg[s].base : 0);
		loom_hwseq_wr64(io, LOOM_REG_SEG_SIZE_LO + off, seg[s].size);
	}
	loom_hwseq_wr(io, LOOM_REG_ISR, LOOM_IRQ_DONE);
	loom_hwseq_wr(io, LOOM_REG_IER, LOOM_IRQ_DONE);
	loom_hwseq_wr(io, LOOM_REG_GIE, irq_line ? 1u : 0u);
	loom_hwseq_wr(io, LOOM_REG_CTRL, LOOM_CTRL_START);
	return LOOM_HWSEQ_OK;
}

/* Step 6: has the running job ended?  ISR.DONE, which stays set until
 * acknowledged, so any number of pollers may ask.  Never waits. */
static inline bool loom_hwseq_done(const struct loom_hwseq_io *io)
{
	return loom_hwseq_rd(io, LOOM_REG_ISR) & LOOM_IRQ_DONE;
}

/* Clears ISR.DONE and reads ISR back: AXI4-Lite writes are posted, and the
 * read makes sure the write has reached the device (the interrupt line is
 * a level, GIE & ISR).  Never waits. */
static inline void loom_hwseq_ack(const struct loom_hwseq_io *io)
{
	loom_hwseq_wr(io, LOOM_REG_ISR, LOOM_IRQ_DONE);
	(void)loom_hwseq_rd(io, LOOM_REG_ISR);
}

/* Step 7, after done: CTRL once (clears this job's clear-on-read DONE and
 * READY), ERR_STATUS, ERR_INSN, every counter, then the acknowledge.
 * Never waits. */
static inline void loom_hwseq_collect(const struct loom_hwseq_io *io, uint32_t *error,
				      uint32_t *error_insn, uint64_t counters[LOOM_CNT_COUNT])
{
	uint32_t c;

	(void)loom_hwseq_rd(io, LOOM_REG_CTRL);
	*error = loom_hwseq_rd(io, LOOM_REG_ERR_STATUS);
	*error_insn = loom_hwseq_rd(io, LOOM_REG_ERR_INSN);
	for (c = 0; c < LOOM_CNT_COUNT; c++)
		counters[c] = loom_hwseq_rd64(io, LOOM_REG_COUNTER_BASE + c * LOOM_REG_COUNTER_STRIDE);
	loom_hwseq_ack(io);
}

/* SOFT_RESET: written 1, then (once idle, or given up) 0, which is right
 * whether the RTL treats the bit as a pulse or a level; a DONE that raced
 * with the reset is acknowledged.  NOT_IDLE when the device did not come
 * back: it may still be reading or writing memory. */
static inline enum loom_hwseq_status loom_hwseq_reset(const struct loom_hwseq_io *io)
{
	bool idle;

	loom_hwseq_wr(io, LOOM_REG_SOFT_RESET, 1);
	idle = loom_hwseq_wait_idle(io);
	loom_hwseq_wr(io, LOOM_REG_SOFT_RESET, 0);
	loom_hwseq_ack(io);
	return idle ? LOOM_HWSEQ_OK : LOOM_HWSEQ_NOT_IDLE;
}

#endif /* LOOM_HWSEQ_H */
