// SPDX-License-Identifier: GPL-2.0
/*
 * loom_hw.c - the register programming sequence of docs/registers.md, in
 * the kernel.
 *
 * driver/lib/hwregs.c performs the same sequence in user space for tsim and
 * the XRT backend; this file keeps its order step for step and reads the
 * same generated offsets (build/gen/loom_isa_gen.h, from
 * hw/spec/loom_regs.def), so the RTL, tsim and a board agree by
 * construction.  What differs is how the kernel waits: the idle polls sleep
 * (they run under ldev->hw_lock in process context) and are bounded in
 * time, and the completion path (loom_hw_done_pending, loom_hw_collect)
 * never sleeps because it runs in the interrupt handler.
 *
 * Three hardware facts shape the code:
 *
 *   - CTRL.DONE is clear-on-read (ap_ctrl_hs).  Completion is therefore
 *     detected through ISR, which latches DONE until written 1; the one
 *     read of CTRL in loom_hw_collect() clears DONE so that it cannot leak
 *     into the next job.
 *   - The interrupt line is level-sensitive: GIE & (ISR & IER).  The
 *     handler must clear ISR before it returns, and must make sure the
 *     write has reached the device (see loom_hw_collect).
 *   - 64-bit registers are two words, written and read low word first.
 */
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/sched.h>

#include "loom_drv.h"

/* How long the accelerator may take to become idle before a start and
 * after a SOFT_RESET (bounded: the AXI master finishes started bursts). */
#define LOOM_HW_IDLE_TIMEOUT_MS 1000

static void wr64(struct loom_dev *ldev, u32 lo_off, u64 v)
{
	loom_wr(ldev, lo_off, lower_32_bits(v));
	loom_wr(ldev, lo_off + 4, upper_32_bits(v));
}

static u64 rd64(struct loom_dev *ldev, u32 lo_off)
{
	u64 lo = loom_rd(ldev, lo_off);
	u64 hi = loom_rd(ldev, lo_off + 4);

	return lo | hi << 32;
}

/* Sleeps until CTRL.IDLE reads 1; -ETIMEDOUT after the bound. */
static int wait_idle(struct loom_dev *ldev)
{
	unsigned long end = jiffies + msecs_to_jiffies(LOOM_HW_IDLE_TIMEOUT_MS);

	for (;;) {
		if (loom_rd(ldev, LOOM_REG_CTRL) & LOOM_CTRL_IDLE)
			return 0;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(20, 100);
	}
}

/* Step 1: a Loom accelerator speaking our ISA.  Any configuration is
 * accepted: user space compares CONFIG_HASH (QUERY) with its binary. */
int loom_hw_probe(struct loom_dev *ldev)
{
	u32 id = loom_rd(ldev, LOOM_REG_ID);

	if (id != LOOM_HW_ID) {
		loom_err(ldev, "ID reads 0x%08x, expected 0x%08x: no Loom accelerator here",
			 id, LOOM_HW_ID);
		return -ENODEV;
	}
	ldev->hw_version = loom_rd(ldev, LOOM_REG_VERSION);
	if ((ldev->hw_version & 0xffff) != LOOM_ISA_VERSION) {
		loom_err(ldev, "accelerator speaks ISA version %u, this driver %u",
			 ldev->hw_version & 0xffff, LOOM_ISA_VERSION);
		return -ENODEV;
	}
	ldev->config_hash = loom_rd(ldev, LOOM_REG_CONFIG_HASH);
	return 0;
}

static void write_segments(struct loom_dev *ldev,
			   const struct loom_hw_segment seg[LOOM_NUM_SEGMENTS])
{
	u32 s;

	for (s = 0; s < LOOM_NUM_SEGMENTS; s++) {
		u32 off = s * LOOM_REG_SEG_STRIDE;

		wr64(ldev, LOOM_REG_SEG_BASE_LO + off, seg[s].size ? seg[s].base : 0);
		wr64(ldev, LOOM_REG_SEG_SIZE_LO + off, seg[s].size);
	}
}

/* Steps 2-5.  Called with hw_lock held; may sleep. */
int loom_hw_start(struct loom_dev *ldev, u64 insn_addr, u32 insn_count,
		  const struct loom_hw_segment seg[LOOM_NUM_SEGMENTS])
{
	int s;

	if (WARN_ON_ONCE(insn_addr & 15))
		return -EINVAL;
	for (s = 0; s < LOOM_NUM_SEGMENTS; s++)
		if (WARN_ON_ONCE(seg[s].size && (seg[s].base & 63)))
			return -EINVAL;
	if (wait_idle(ldev)) {
		loom_err(ldev, "accelerator never became idle (CTRL.IDLE stays 0)");
		return -EIO;
	}
	wr64(ldev, LOOM_REG_INSN_ADDR_LO, insn_addr);
	loom_wr(ldev, LOOM_REG_INSN_COUNT, insn_count);
	write_segments(ldev, seg);
	loom_wr(ldev, LOOM_REG_ISR, LOOM_IRQ_DONE);
	/* IER stays on without an IRQ line too: ISR then latches DONE for
	 * the polling path, and GIE = 0 keeps the line quiet. */
	loom_wr(ldev, LOOM_REG_IER, LOOM_IRQ_DONE);
	loom_wr(ldev, LOOM_REG_GIE, ldev->irq >= 0 ? 1 : 0);
	/*
	 * The accelerator fetches instructions by DMA as soon as it sees
	 * START.  loom_wr() is writel(), not writel_relaxed(): it puts a
	 * write barrier before the store (dma_wmb on arm64), so the job's
	 * instructions and data in coherent (on Zynq: non-cacheable,
	 * write-buffered) memory are visible to the device before START is.
	 */
	loom_wr(ldev, LOOM_REG_CTRL, LOOM_CTRL_START);
	return 0;
}

/* Did the running job finish?  Safe in the interrupt handler. */
bool loom_hw_done_pending(struct loom_dev *ldev)
{
	return loom_rd(ldev, LOOM_REG_ISR) & LOOM_IRQ_DONE;
}

/* Step 7.  Safe in the interrupt handler. */
void loom_hw_collect(struct loom_dev *ldev, u32 *error, u32 *error_insn,
		     u64 counters[LOOM_CNT_COUNT])
{
	u32 c;

	/* Clears the clear-on-read CTRL.DONE of this job. */
	loom_rd(ldev, LOOM_REG_CTRL);
	*error = loom_rd(ldev, LOOM_REG_ERR_STATUS);
	*error_insn = loom_rd(ldev, LOOM_REG_ERR_INSN);
	for (c = 0; c < LOOM_CNT_COUNT; c++)
		counters[c] = rd64(ldev, LOOM_REG_COUNTER_BASE + c * LOOM_REG_COUNTER_STRIDE);
	loom_wr(ldev, LOOM_REG_ISR, LOOM_IRQ_DONE);
	/*
	 * AXI4-Lite writes are posted through the interconnect: without this
	 * read-back the handler can return while the ISR write is still on
	 * its way, the level-sensitive line is still high when the GIC
	 * re-samples it, and the same completion interrupts twice.
	 */
	loom_rd(ldev, LOOM_REG_ISR);
}

/*
 * SOFT_RESET: written 1 and, once the device is idle, back to 0, which is
 * right whether the RTL treats the bit as a pulse or as a level.  Called
 * with hw_lock held; may sleep.
 */
int loom_hw_reset(struct loom_dev *ldev)
{
	int ret;

	loom_wr(ldev, LOOM_REG_SOFT_RESET, 1);
	ret = wait_idle(ldev);
	loom_wr(ldev, LOOM_REG_SOFT_RESET, 0);
	loom_wr(ldev, LOOM_REG_ISR, LOOM_IRQ_DONE);
	if (ret)
		loom_err(ldev, "accelerator not idle %d ms after SOFT_RESET",
			 LOOM_HW_IDLE_TIMEOUT_MS);
	return ret;
}
