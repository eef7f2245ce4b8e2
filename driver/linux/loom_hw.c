// SPDX-License-Identifier: GPL-2.0
/*
 * loom_hw.c - the register programming sequence of docs/registers.md, in
 * the kernel.
 *
 * The steps are driver/lib/hwseq.h, the same static inline code libloom's
 * hwregs.c runs for tsim and XRT, over the same generated offsets and bits
 * (build/gen/loom_isa_gen.h, from hw/spec/loom_regs.def); so the RTL,
 * tsim and a board agree by construction.  This file only adds what the
 * kernel needs around them:
 *
 *   - the transport: loom_rd()/loom_wr() over ldev->hw.regs (MMIO with
 *     readl/writel, or the test device), logged with debug=16;
 *   - how the kernel waits: the idle polls sleep (they run under
 *     ldev->hw_lock in process context) and are bounded in time
 *     (LOOM_HW_IDLE_TIMEOUT_MS), while the completion path
 *     (loom_hw_done_pending, loom_hw_collect, loom_hw_ack) never sleeps
 *     because it runs in the interrupt handler;
 *   - errors as negative errno values, logged with the register at fault.
 *
 * tests/kernel builds this file in user space against a shim of the few
 * kernel functions it calls and runs real jobs on tsim through it.
 */
#include <linux/bug.h>
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/jiffies.h>

#include "loom_hw.h"

/* How long the accelerator may take to become idle before a start and
 * after a SOFT_RESET (bounded: the AXI master finishes started bursts). */
#define LOOM_HW_IDLE_TIMEOUT_MS 1000

/* The hwseq transport: the device and the end of the current idle wait. */
struct seq_ctx {
	struct loom_hw *hw;
	unsigned long end;              /* jiffies */
};

static u32 seq_read(void *ctx, u32 off)
{
	return loom_rd(((struct seq_ctx *)ctx)->hw, off);
}

static void seq_write(void *ctx, u32 off, u32 val)
{
	loom_wr(((struct seq_ctx *)ctx)->hw, off, val);
}

/* Sleeps between idle polls; false once LOOM_HW_IDLE_TIMEOUT_MS passed. */
static bool seq_pause(void *ctx, u32 polls)
{
	struct seq_ctx *c = ctx;

	if (!polls)
		c->end = jiffies + msecs_to_jiffies(LOOM_HW_IDLE_TIMEOUT_MS);
	else if (time_after(jiffies, c->end))
		return false;
	usleep_range(20, 100);
	return true;
}

static struct loom_hwseq_io seq_io(struct seq_ctx *c)
{
	return (struct loom_hwseq_io){
		.ctx = c, .read = seq_read, .write = seq_write, .pause = seq_pause,
	};
}

/* Step 1: a Loom accelerator speaking our ISA.  Any configuration is
 * accepted: user space compares CONFIG_HASH (QUERY) with its binary. */
int loom_hw_probe(struct loom_hw *hw)
{
	struct seq_ctx c = { .hw = hw };
	const struct loom_hwseq_io io = seq_io(&c);
	struct loom_hwseq_ident id;

	switch (loom_hwseq_probe(&io, &id)) {
	case LOOM_HWSEQ_OK:
		break;
	case LOOM_HWSEQ_NOT_LOOM:
		loom_err(hw, "ID reads 0x%08x, expected 0x%08x: no Loom accelerator here",
			 id.id, LOOM_HW_ID);
		return -ENODEV;
	default:
		loom_err(hw, "accelerator speaks ISA version %u, this driver %u",
			 id.version & 0xffff, LOOM_ISA_VERSION);
		return -ENODEV;
	}
	hw->hw_version = id.version;
	hw->config_hash = id.config_hash;
	return 0;
}

/* Steps 2-5.  Called with hw_lock held; may sleep.  The caller has
 * checked the alignments (a misaligned address here is a driver bug). */
int loom_hw_start(struct loom_hw *hw, u64 insn_addr, u32 insn_count,
		  const struct loom_hw_segment seg[LOOM_NUM_SEGMENTS])
{
	struct seq_ctx c = { .hw = hw };
	const struct loom_hwseq_io io = seq_io(&c);
	int bad = 0;

	switch (loom_hwseq_start(&io, insn_addr, insn_count, seg, hw->irq >= 0, &bad)) {
	case LOOM_HWSEQ_OK:
		return 0;
	case LOOM_HWSEQ_NOT_IDLE:
		loom_err(hw, "accelerator never became idle (CTRL.IDLE stays 0)");
		return -EIO;
	default:
		WARN_ONCE(1, "loom: job with a misaligned address (segment %d)", bad);
		return -EINVAL;
	}
}

/* Did the running job end?  ISR.DONE.  Safe in the interrupt handler. */
bool loom_hw_done_pending(struct loom_hw *hw)
{
	struct seq_ctx c = { .hw = hw };
	const struct loom_hwseq_io io = seq_io(&c);

	return loom_hwseq_done(&io);
}

/* Step 7.  Safe in the interrupt handler. */
void loom_hw_collect(struct loom_hw *hw, u32 *error, u32 *error_insn,
		     u64 counters[LOOM_CNT_COUNT])
{
	struct seq_ctx c = { .hw = hw };
	const struct loom_hwseq_io io = seq_io(&c);

	loom_hwseq_collect(&io, error, error_insn, counters);
}

/* Acknowledges a DONE nobody collects (a job aborted just as it ended).
 * Safe in the interrupt handler. */
void loom_hw_ack(struct loom_hw *hw)
{
	struct seq_ctx c = { .hw = hw };
	const struct loom_hwseq_io io = seq_io(&c);

	loom_hwseq_ack(&io);
}

/*
 * SOFT_RESET.  -ETIMEDOUT when the accelerator is not idle
 * LOOM_HW_IDLE_TIMEOUT_MS later: it may still be reading or writing the
 * memory of the job it was running.  Called with hw_lock held; may sleep.
 */
int loom_hw_reset(struct loom_hw *hw)
{
	struct seq_ctx c = { .hw = hw };
	const struct loom_hwseq_io io = seq_io(&c);

	if (loom_hwseq_reset(&io) == LOOM_HWSEQ_OK)
		return 0;
	loom_err(hw, "accelerator not idle %d ms after SOFT_RESET", LOOM_HW_IDLE_TIMEOUT_MS);
	return -ETIMEDOUT;
}

/* The configuration's name for log messages ("unknown" for a hash that is
 * not in hw/spec/loom_configs.def). */
const char *loom_hw_config_name(u32 hash)
{
	const char *name = loom_hwseq_config_name(hash);

	return name ? name : "unknown";
}
