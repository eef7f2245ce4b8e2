// SPDX-License-Identifier: GPL-2.0
/*
 * loom_testdev.c - the software test device: a Loom accelerator without
 * hardware, for testing the driver and its ABI anywhere (tests/qemu boots
 * it in QEMU).
 *
 * With the module parameter testdev=N the module registers N platform
 * devices named "loom-testdev"; the driver binds them like real hardware,
 * except that registers are reached through loom_testdev_regs instead of
 * MMIO and the "interrupt" is a call of the driver's handler.  Everything
 * above the register transport is the code that drives a board: the
 * programming sequence of loom_hw.c, the queue, watchdog and aborts of
 * loom_job.c, the ioctls.
 *
 * The fake register file follows docs/registers.md where the driver can
 * tell: ID, VERSION and CONFIG_HASH read as a Loom; CTRL.IDLE is 0 from
 * START until done or SOFT_RESET, CTRL.DONE is clear-on-read, ISR latches
 * DONE when IER allows it and is write-1-to-clear, and the interrupt fires
 * when GIE is set.  It executes no Loom instructions; it reads the first
 * instruction as a test command (LOOM_TESTDEV_* in loom_uapi.h): complete
 * after a delay copying segment 0 to segment 1 within the segment table's
 * bounds, fail with a chosen error code, hang until SOFT_RESET, or wedge:
 * hang, keep writing segment 1 and ignore the next few SOFT_RESETs, as an
 * accelerator whose DMA engine does not stop.
 *
 * Its "DMA" goes through the memory of the driver's buffers
 * (loom_buf_bus_to_virt), so an address the driver did not program from a
 * buffer fails the job with BUS, as a DECERR would.  A wedged job that
 * finds its memory gone logs "stray DMA": on hardware that write would
 * have landed in memory the kernel had given to someone else (the QEMU
 * test fails on that line).  SOFT_RESET, like the hardware's, returns to
 * idle only once the device has stopped touching memory (`in_dma`).
 *
 * A job runs in steps of one delayed work: fetch (read the command, HANG
 * stops here), then, after the command's delay, execute (WEDGE executes
 * again and again).  Every step checks the generation `gen`, which START
 * and a SOFT_RESET that is obeyed bump, so a reset job never completes
 * late.
 */
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "loom_drv.h"

static bool testdev_irq = true;
module_param(testdev_irq, bool, 0444);
MODULE_PARM_DESC(testdev_irq, "test devices complete by interrupt (1, default) or are polled (0)");

static char *testdev_config = "default";
module_param(testdev_config, charp, 0444);
MODULE_PARM_DESC(testdev_config, "configuration the test devices report: tiny, default or large");

#define TD_NREGS ((LOOM_REG_COUNTER_BASE + LOOM_CNT_COUNT * LOOM_REG_COUNTER_STRIDE) / 4)
#define TD_MAX_DELAY_MS 10000
#define TD_MAX_WEDGE_RESETS 16
#define TD_MHZ 100 /* the clock the CYCLES counter pretends */

enum td_step { TD_FETCH, TD_EXECUTE };

struct td_cmd {
	u32 op, delay_ms, arg;
};

struct loom_testdev {
	struct loom_dev *ldev;
	spinlock_t lock;
	u32 reg[TD_NREGS];      /* plain read/write storage */
	u32 config_hash;
	bool busy;              /* START seen, not done and not reset */
	bool in_dma;            /* the work is reading or writing buffers */
	bool done;              /* CTRL.DONE, clear on read */
	u32 isr;
	u32 gen;                /* bumped by START and an obeyed SOFT_RESET */
	u32 job_gen;            /* gen of the job the work executes */
	u32 wedge_resets;       /* SOFT_RESETs still to ignore (WEDGE) */
	u32 wedge_writes;       /* WEDGE: writes so far, the byte it writes */
	u32 strays;             /* WEDGE writes that found no memory */
	enum td_step step;
	struct td_cmd cmd;
	struct delayed_work work;
};

/* The job's registers, as the work reads them. */
struct td_job {
	u64 insn_addr;
	u32 insn_count;
	struct loom_hw_segment seg[LOOM_NUM_SEGMENTS];
};

struct td_result {
	u32 error, error_insn;
	u64 counters[LOOM_CNT_COUNT];
};

static struct platform_device *td_pdevs[8];
static unsigned int td_count;

static struct loom_testdev *td_of(struct loom_hw *hw)
{
	return hw->testdev;
}

static u64 reg64(const struct loom_testdev *td, u32 lo_off)
{
	return td->reg[lo_off / 4] | (u64)td->reg[lo_off / 4 + 1] << 32;
}

static void set_reg64(struct loom_testdev *td, u32 lo_off, u64 v)
{
	td->reg[lo_off / 4] = lower_32_bits(v);
	td->reg[lo_off / 4 + 1] = upper_32_bits(v);
}

/* ---- registers ---- */

static u32 ctrl_read(struct loom_testdev *td)
{
	u32 v = (td->busy || td->in_dma) ? 0 : LOOM_CTRL_IDLE;

	if (td->done)
		v |= LOOM_CTRL_DONE | LOOM_CTRL_READY;
	td->done = false;
	return v;
}

static u32 td_read(struct loom_hw *hw, u32 off)
{
	struct loom_testdev *td = td_of(hw);
	unsigned long flags;
	u32 v;

	spin_lock_irqsave(&td->lock, flags);
	switch (off) {
	case LOOM_REG_CTRL:
		v = ctrl_read(td);
		break;
	case LOOM_REG_ISR:
		v = td->isr;
		break;
	case LOOM_REG_ID:
		v = LOOM_HW_ID;
		break;
	case LOOM_REG_VERSION:
		v = LOOM_ISA_VERSION;
		break;
	case LOOM_REG_CONFIG_HASH:
		v = td->config_hash;
		break;
	default:
		v = off < TD_NREGS * 4 && !(off & 3) ? td->reg[off / 4] : 0;
	}
	spin_unlock_irqrestore(&td->lock, flags);
	return v;
}

static void td_start(struct loom_testdev *td)
{
	if (td->busy || td->in_dma)
		return; /* ap_start while busy is ignored */
	td->busy = true;
	td->done = false;
	td->job_gen = ++td->gen;
	td->step = TD_FETCH;
	td->wedge_resets = 0;
	td->wedge_writes = 0;
	mod_delayed_work(system_wq, &td->work, 0);
}

/* A wedged job ignores SOFT_RESET: it stays busy and goes on writing. */
static void td_soft_reset(struct loom_testdev *td)
{
	if (td->busy && td->wedge_resets) {
		td->wedge_resets--;
		return;
	}
	td->busy = false;
	td->done = false;
	td->gen++;
	td->reg[LOOM_REG_ERR_STATUS / 4] = 0;
	td->reg[LOOM_REG_ERR_INSN / 4] = 0;
	cancel_delayed_work(&td->work);
}

static void td_write(struct loom_hw *hw, u32 off, u32 val)
{
	struct loom_testdev *td = td_of(hw);
	unsigned long flags;

	spin_lock_irqsave(&td->lock, flags);
	switch (off) {
	case LOOM_REG_CTRL:
		if (val & LOOM_CTRL_START)
			td_start(td);
		break;
	case LOOM_REG_ISR:
		td->isr &= ~val;
		break;
	case LOOM_REG_SOFT_RESET:
		if (val & 1)
			td_soft_reset(td);
		break;
	case LOOM_REG_ID:
	case LOOM_REG_VERSION:
	case LOOM_REG_CONFIG_HASH:
	case LOOM_REG_ERR_STATUS:
	case LOOM_REG_ERR_INSN:
		break; /* read-only */
	default:
		if (off < TD_NREGS * 4 && !(off & 3))
			td->reg[off / 4] = val;
	}
	spin_unlock_irqrestore(&td->lock, flags);
}

static const struct loom_reg_ops loom_testdev_regs = {
	.read = td_read,
	.write = td_write,
};

/* ---- executing a job ---- */

static void snapshot(const struct loom_testdev *td, struct td_job *j)
{
	u32 s;

	j->insn_addr = reg64(td, LOOM_REG_INSN_ADDR_LO);
	j->insn_count = td->reg[LOOM_REG_INSN_COUNT / 4];
	for (s = 0; s < LOOM_NUM_SEGMENTS; s++) {
		u32 off = s * LOOM_REG_SEG_STRIDE;

		j->seg[s].base = reg64(td, LOOM_REG_SEG_BASE_LO + off);
		j->seg[s].size = reg64(td, LOOM_REG_SEG_SIZE_LO + off);
	}
}

/* Reads the test command; LOOM_ERR_NONE or why the job fails at once. */
static u32 fetch(struct loom_testdev *td, const struct td_job *j, struct td_cmd *cmd)
{
	const __le32 *w = loom_buf_bus_to_virt(td->ldev, j->insn_addr, LOOM_UAPI_INSN_BYTES);

	if (!w)
		return LOOM_ERR_BUS;
	if (le32_to_cpu(w[0]) != LOOM_TESTDEV_MAGIC)
		return LOOM_ERR_ILLEGAL;
	cmd->op = le32_to_cpu(w[1]);
	cmd->delay_ms = le32_to_cpu(w[2]);
	cmd->arg = le32_to_cpu(w[3]);
	if (cmd->delay_ms > TD_MAX_DELAY_MS)
		return LOOM_ERR_ILLEGAL;
	if (cmd->op < LOOM_TESTDEV_OP_COPY || cmd->op > LOOM_TESTDEV_OP_WEDGE)
		return LOOM_ERR_ILLEGAL;
	if (cmd->op == LOOM_TESTDEV_OP_WEDGE && cmd->arg > TD_MAX_WEDGE_RESETS)
		return LOOM_ERR_ILLEGAL;
	return LOOM_ERR_NONE;
}

/* COPY within the segment table's bounds, like the DMA engines check. */
static u32 copy(struct loom_testdev *td, const struct td_job *j, u32 n)
{
	void *src, *dst;

	if (n > LOOM_TESTDEV_MAX_COPY)
		return LOOM_ERR_ILLEGAL;
	if (n > j->seg[0].size || n > j->seg[1].size)
		return LOOM_ERR_SEGMENT;
	if (!n)
		return LOOM_ERR_NONE;
	src = loom_buf_bus_to_virt(td->ldev, j->seg[0].base, n);
	dst = loom_buf_bus_to_virt(td->ldev, j->seg[1].base, n);
	if (!src || !dst)
		return LOOM_ERR_BUS;
	memmove(dst, src, n);
	return LOOM_ERR_NONE;
}

/*
 * WEDGE: one more write of the wedged DMA engine, LOOM_TESTDEV_WEDGE_BYTES
 * of the byte `n` at the start of segment 1.  Memory the driver has freed
 * is not written but reported: on hardware the write would have gone to
 * whoever got that memory next.  The engine keeps running either way.
 */
static void wedge_write(struct loom_testdev *td, const struct td_job *j, u32 n)
{
	u8 *dst;

	if (j->seg[1].size < LOOM_TESTDEV_WEDGE_BYTES)
		return;
	dst = loom_buf_bus_to_virt(td->ldev, j->seg[1].base, LOOM_TESTDEV_WEDGE_BYTES);
	if (dst)
		memset(dst, n & 0xff, LOOM_TESTDEV_WEDGE_BYTES);
	else if (!td->strays++)
		loom_err(td->ldev, "stray DMA: wedged job wrote bus address 0x%llx, memory the driver has freed",
			 j->seg[1].base);
}

static void execute(struct loom_testdev *td, const struct td_job *j, struct td_result *r)
{
	r->counters[LOOM_CNT_CYCLES] = (u64)td->cmd.delay_ms * TD_MHZ * 1000;
	r->counters[LOOM_CNT_INSN_COMPUTE] = j->insn_count;
	r->counters[LOOM_CNT_BYTES_RD_INSN] = (u64)j->insn_count * LOOM_UAPI_INSN_BYTES;
	if (td->cmd.op == LOOM_TESTDEV_OP_FAIL) {
		r->error = td->cmd.arg;
		r->error_insn = j->insn_count - 1;
		return;
	}
	r->error = copy(td, j, td->cmd.arg);
	if (r->error == LOOM_ERR_NONE) {
		r->counters[LOOM_CNT_BYTES_RD_INP] = td->cmd.arg;
		r->counters[LOOM_CNT_BYTES_WR_OUT] = td->cmd.arg;
	}
}

/* Done: results into the registers, DONE, ISR; true if the line rises. */
static bool td_complete(struct loom_testdev *td, const struct td_result *r)
{
	u32 c;

	td->busy = false;
	td->done = true;
	td->reg[LOOM_REG_ERR_STATUS / 4] = r->error;
	td->reg[LOOM_REG_ERR_INSN / 4] = r->error_insn;
	for (c = 0; c < LOOM_CNT_COUNT; c++)
		set_reg64(td, LOOM_REG_COUNTER_BASE + c * LOOM_REG_COUNTER_STRIDE, r->counters[c]);
	td->isr |= td->reg[LOOM_REG_IER / 4] & LOOM_IRQ_DONE;
	return (td->reg[LOOM_REG_GIE / 4] & 1) && (td->isr & td->reg[LOOM_REG_IER / 4]);
}

/* One step of the job; see the comment at the top. */
static void td_work(struct work_struct *work)
{
	struct loom_testdev *td = container_of(to_delayed_work(work), struct loom_testdev, work);
	struct td_result r = { 0 };
	struct td_job j;
	enum td_step step;
	bool raise = false;
	u32 gen;

	spin_lock_irq(&td->lock);
	if (!td->busy || td->gen != td->job_gen) {
		spin_unlock_irq(&td->lock);
		return;
	}
	gen = td->gen;
	step = td->step;
	td->in_dma = true;
	snapshot(td, &j);
	spin_unlock_irq(&td->lock);

	if (step == TD_FETCH)
		r.error = fetch(td, &j, &td->cmd);
	else if (td->cmd.op == LOOM_TESTDEV_OP_WEDGE)
		wedge_write(td, &j, ++td->wedge_writes);
	else
		execute(td, &j, &r);

	spin_lock_irq(&td->lock);
	td->in_dma = false;
	if (td->busy && td->gen == gen) {
		if (step == TD_FETCH && r.error == LOOM_ERR_NONE) {
			td->step = TD_EXECUTE;
			if (td->cmd.op == LOOM_TESTDEV_OP_WEDGE)
				td->wedge_resets = td->cmd.arg;
			if (td->cmd.op != LOOM_TESTDEV_OP_HANG)
				mod_delayed_work(system_wq, &td->work,
						 msecs_to_jiffies(td->cmd.delay_ms));
		} else if (td->cmd.op == LOOM_TESTDEV_OP_WEDGE && step == TD_EXECUTE) {
			mod_delayed_work(system_wq, &td->work,
					 msecs_to_jiffies(td->cmd.delay_ms));
		} else {
			raise = td_complete(td, &r);
		}
	}
	spin_unlock_irq(&td->lock);
	if (raise && td->ldev->hw.irq >= 0)
		loom_job_irq(0, td->ldev);
}

/* ---- life cycle ---- */

int loom_testdev_create(struct loom_dev *ldev)
{
	struct loom_testdev *td;
	u32 hash = loom_hwseq_config_hash(testdev_config);

	if (!hash) {
		loom_err(ldev, "testdev_config=%s: not a configuration of hw/spec/loom_configs.def",
			 testdev_config);
		return -EINVAL;
	}
	td = kzalloc(sizeof(*td), GFP_KERNEL);
	if (!td)
		return -ENOMEM;
	td->ldev = ldev;
	td->config_hash = hash;
	spin_lock_init(&td->lock);
	INIT_DELAYED_WORK(&td->work, td_work);
	ldev->hw.testdev = td;
	ldev->hw.regs = &loom_testdev_regs;
	ldev->hw.irq = testdev_irq ? 0 : -1;
	return 0;
}

void loom_testdev_destroy(struct loom_dev *ldev)
{
	struct loom_testdev *td = td_of(&ldev->hw);

	cancel_delayed_work_sync(&td->work);
	kfree(td);
}

void loom_testdev_unregister(void)
{
	while (td_count)
		platform_device_unregister(td_pdevs[--td_count]);
}

/* Registers `count` devices; the driver probes each as it appears. */
int loom_testdev_register(unsigned int count)
{
	struct platform_device_info info = {
		.name = LOOM_TESTDEV_NAME,
		.dma_mask = DMA_BIT_MASK(64),
	};
	struct platform_device *pdev;
	unsigned int i;

	for (i = 0; i < count && i < ARRAY_SIZE(td_pdevs); i++) {
		info.id = i;
		pdev = platform_device_register_full(&info);
		if (IS_ERR(pdev)) {
			loom_testdev_unregister();
			return PTR_ERR(pdev);
		}
		td_pdevs[td_count++] = pdev;
	}
	return 0;
}
