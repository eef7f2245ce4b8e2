/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loom_hw.h - the hardware layer of loom.ko: how the driver reaches the
 * accelerator's registers, its log helpers, and the programming sequence
 * over them (loom_hw.c, built from the steps of driver/lib/hwseq.h, which
 * libloom's hwregs.c runs too).
 *
 * This is the driver's lowest header and needs nothing of the kernel but
 * types, struct device and the dev_* log functions: tests/kernel compiles
 * loom_hw.c in user space against a shim of exactly those and drives the
 * Verilated RTL through it, so the code a board runs is the code tested
 * against tsim.
 */
#ifndef LOOM_HW_H
#define LOOM_HW_H

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/device.h>
#include <linux/types.h>

#include "driver/lib/hwseq.h"

/* ---- loom_drv.c: the debug mask (module parameter `debug`) ---- */

extern unsigned int loom_debug;

#define LOOM_DBG_IOCTL BIT(0) /* every ioctl and why it was refused */
#define LOOM_DBG_BUF BIT(1)   /* buffer alloc, free, mmap, pins */
#define LOOM_DBG_JOB BIT(2)   /* job queue, start, completion, aborts */
#define LOOM_DBG_IRQ BIT(3)   /* interrupts */
#define LOOM_DBG_REG BIT(4)   /* every register write (verbose) */

/*
 * Log helpers: prefixed by the device and the function name.  `x` is
 * anything with a `struct device *dev` member (struct loom_dev, struct
 * loom_hw).
 */
#define loom_err(x, fmt, ...) \
	dev_err((x)->dev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define loom_warn(x, fmt, ...) \
	dev_warn((x)->dev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define loom_info(x, fmt, ...) \
	dev_info((x)->dev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define loom_dbg(x, class, fmt, ...)                                           \
	do {                                                                   \
		if (unlikely(loom_debug & LOOM_DBG_##class))                   \
			dev_info((x)->dev, "[%s] %s: " fmt, #class, __func__,  \
				 ##__VA_ARGS__);                               \
	} while (0)

/* ---- registers ---- */

struct loom_hw;

/*
 * How registers are reached (the ivpu driver's hw_ops): MMIO on hardware,
 * the fake register file of loom_testdev.c in test mode, a stub once the
 * device is unbound.  Both must work in any context, interrupts disabled
 * included, and write must order earlier writes to DMA memory before the
 * register write (writel, not writel_relaxed).
 */
struct loom_reg_ops {
	u32 (*read)(struct loom_hw *hw, u32 offset);
	void (*write)(struct loom_hw *hw, u32 offset, u32 value);
};

/* The accelerator as the hardware layer sees it (in struct loom_dev). */
struct loom_hw {
	struct device *dev;             /* for log messages */
	const struct loom_reg_ops *regs;
	void __iomem *mmio;             /* hardware */
	void *testdev;                  /* struct loom_testdev in test mode */
	int irq;                        /* < 0: completion by polling */
	u32 hw_version;                 /* VERSION, read at probe */
	u32 config_hash;                /* CONFIG_HASH, read at probe */
};

static inline u32 loom_rd(struct loom_hw *hw, u32 off)
{
	return hw->regs->read(hw, off);
}

static inline void loom_wr(struct loom_hw *hw, u32 off, u32 val)
{
	loom_dbg(hw, REG, "0x%02x <- 0x%08x", off, val);
	hw->regs->write(hw, off, val);
}

/* ---- loom_hw.c: the programming sequence ---- */

int loom_hw_probe(struct loom_hw *hw);
int loom_hw_start(struct loom_hw *hw, u64 insn_addr, u32 insn_count,
		  const struct loom_hw_segment seg[LOOM_NUM_SEGMENTS]);
bool loom_hw_done_pending(struct loom_hw *hw);
void loom_hw_collect(struct loom_hw *hw, u32 *error, u32 *error_insn,
		     u64 counters[LOOM_CNT_COUNT]);
void loom_hw_ack(struct loom_hw *hw);
int loom_hw_reset(struct loom_hw *hw);
const char *loom_hw_config_name(u32 hash);

#endif /* LOOM_HW_H */
