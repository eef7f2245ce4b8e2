/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loom_drv.h - the map of loom.ko: the objects every file of the driver
 * shares, grouped under the file that owns them.
 *
 *   loom_drv.c      module parameters, platform driver, misc device, file
 *                   open/release, the device's lifetime
 *   loom_hw.c       the register programming sequence (docs/registers.md)
 *   loom_buf.c      DMA-coherent buffers, their handles and mmap
 *   loom_job.c      the job queue, completion interrupt, watchdog, aborts
 *   loom_ioctl.c    the ioctls of include/loom/loom_uapi.h: every number
 *                   from user space is checked there
 *   loom_testdev.c  the software test device (module parameter testdev=N)
 *
 * Locking, outermost first (nothing takes them in another order):
 *
 *   file->lock     (mutex)    the file's buffers accounting and its one job
 *   ldev->hw_lock  (mutex)    every multi-register sequence: start, reset
 *   mmap_lock                 (mmap, and copy_*_user may fault)
 *   ldev->buf_lock (mutex)    the device's handle table; never held across
 *                             copy_*_user
 *   ldev->lock     (spinlock) the queue, the running job, job states; taken
 *                             in the interrupt handler
 *   testdev lock   (spinlock) the fake register file, innermost
 *
 * Lifetimes: a struct loom_dev is reference counted (every open file holds
 * one), so unbinding the device while files are open leaves them working
 * on a device marked gone (-ENODEV).  A buffer is reference counted too:
 * its handle and every VMA that maps it hold one, so FREE of a mapped
 * buffer only drops the handle.  A job is owned by its file and, while
 * queued or running, referenced by the device.
 */
#ifndef LOOM_DRV_H
#define LOOM_DRV_H

#include <linux/device.h>
#include <linux/idr.h>
#include <linux/irqreturn.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "loom/loom_uapi.h"
#include "loom_isa_gen.h"

#define LOOM_DRV_NAME "loom"
/* The device-tree binding (docs/linux-driver.md, bitstreams/boards.def). */
#define LOOM_DT_COMPATIBLE "loom,accel-1.0"
#define LOOM_TESTDEV_NAME "loom-testdev"

/* ISR and IER bits (ap_ctrl_hs; docs/registers.md). */
#define LOOM_IRQ_DONE BIT(0)

/* ---- loom_drv.c: module parameters ---- */

extern unsigned int loom_debug;         /* LOOM_DBG_* mask */
extern unsigned int loom_timeout_ms;    /* default job and wait timeout */
extern unsigned int loom_max_buffer_mb; /* largest buffer */
extern unsigned int loom_max_file_mb;   /* all buffers of one open file */
extern unsigned int loom_max_file_buffers;

/* Debug classes of the `debug` module parameter. */
#define LOOM_DBG_IOCTL BIT(0) /* every ioctl and why it was refused */
#define LOOM_DBG_BUF BIT(1)   /* buffer alloc, free, mmap */
#define LOOM_DBG_JOB BIT(2)   /* job queue, start, completion, aborts */
#define LOOM_DBG_IRQ BIT(3)   /* interrupts */
#define LOOM_DBG_REG BIT(4)   /* every register write (verbose) */

/* Log helpers: prefixed by the device and the function name. */
#define loom_err(ldev, fmt, ...) \
	dev_err((ldev)->dev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define loom_warn(ldev, fmt, ...) \
	dev_warn((ldev)->dev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define loom_info(ldev, fmt, ...) \
	dev_info((ldev)->dev, "%s: " fmt, __func__, ##__VA_ARGS__)
#define loom_dbg(ldev, class, fmt, ...)                                        \
	do {                                                                   \
		if (unlikely(loom_debug & LOOM_DBG_##class))                   \
			dev_info((ldev)->dev, "[%s] %s: " fmt, #class,         \
				 __func__, ##__VA_ARGS__);                     \
	} while (0)

/* ---- loom_drv.c: the device ---- */

struct loom_job;
struct loom_dev;

/*
 * How registers are reached (the ivpu driver's hw_ops): MMIO on hardware,
 * the fake register file of loom_testdev.c in test mode.  Both must work in
 * any context, interrupts disabled included.
 */
struct loom_reg_ops {
	u32 (*read)(struct loom_dev *ldev, u32 offset);
	void (*write)(struct loom_dev *ldev, u32 offset, u32 value);
};

struct loom_dev {
	struct kref ref;
	struct device *dev;             /* the platform device (referenced) */
	struct miscdevice misc;
	char name[16];                  /* "loomN" */
	int id;                         /* N */
	bool gone;                      /* unbound: every ioctl fails -ENODEV */

	const struct loom_reg_ops *regs;
	void __iomem *mmio;             /* hardware */
	void *testdev;                  /* struct loom_testdev in test mode */
	int irq;                        /* < 0: completion by polling */
	struct clk_bulk_data *clks;
	int num_clks;

	u32 hw_version;
	u32 config_hash;

	struct mutex hw_lock;
	struct mutex buf_lock;
	struct idr handles;             /* handle -> struct loom_buf */

	spinlock_t lock;
	struct list_head queue;         /* jobs waiting for the accelerator */
	struct loom_job *running;       /* the job on the accelerator */
	wait_queue_head_t done_wq;      /* woken when any job ends */
	struct work_struct kick_work;   /* starts the next queued job */
	struct delayed_work watchdog;   /* aborts a job past its deadline */
	struct delayed_work poll_work;  /* completion when there is no IRQ */

	u64 stat_jobs, stat_timeouts, stat_resets; /* under lock */
};

/* Per open file. */
struct loom_file {
	struct loom_dev *ldev;
	struct mutex lock;
	u32 nbufs;
	u64 bytes;
	struct loom_job *job;           /* submitted, result not yet taken */
};

void loom_dev_put(struct loom_dev *ldev);

static inline u32 loom_rd(struct loom_dev *ldev, u32 off)
{
	return ldev->regs->read(ldev, off);
}

static inline void loom_wr(struct loom_dev *ldev, u32 off, u32 val)
{
	loom_dbg(ldev, REG, "0x%02x <- 0x%08x", off, val);
	ldev->regs->write(ldev, off, val);
}

/* ---- loom_hw.c: the programming sequence ---- */

struct loom_hw_segment {
	u64 base;                       /* bus address, 64-byte aligned */
	u64 size;                       /* bytes, 0 = unmapped */
};

int loom_hw_probe(struct loom_dev *ldev);
int loom_hw_start(struct loom_dev *ldev, u64 insn_addr, u32 insn_count,
		  const struct loom_hw_segment seg[LOOM_NUM_SEGMENTS]);
bool loom_hw_done_pending(struct loom_dev *ldev);
void loom_hw_collect(struct loom_dev *ldev, u32 *error, u32 *error_insn,
		     u64 counters[LOOM_CNT_COUNT]);
int loom_hw_reset(struct loom_dev *ldev);

/* ---- loom_buf.c: buffers ---- */

struct loom_buf {
	struct kref ref;                /* the handle + every VMA */
	struct loom_dev *ldev;
	struct loom_file *owner;        /* NULL once the handle is freed */
	u32 handle;
	u64 size;                       /* what ALLOC asked for */
	size_t alloc_size;              /* PAGE_ALIGN(size) */
	void *vaddr;
	dma_addr_t dma;
};

int loom_buf_alloc(struct loom_file *lf, u64 size, u32 *handle, u64 *offset);
int loom_buf_free(struct loom_file *lf, u32 handle);
void loom_buf_free_all(struct loom_file *lf);
struct loom_buf *loom_buf_lookup(struct loom_file *lf, u32 handle);
int loom_buf_mmap(struct loom_file *lf, struct vm_area_struct *vma);
void *loom_buf_bus_to_virt(struct loom_dev *ldev, u64 addr, u64 len);

/* ---- loom_job.c: jobs ---- */

enum loom_job_state {
	LOOM_JOB_QUEUED,
	LOOM_JOB_RUNNING,
	LOOM_JOB_ENDED,                 /* result valid */
};

struct loom_job {
	struct kref ref;
	struct list_head node;          /* in ldev->queue while queued */
	enum loom_job_state state;      /* under ldev->lock */
	u32 timeout_ms;
	unsigned long deadline;         /* jiffies, set when started */
	u64 insn_addr;
	u32 insn_count;
	struct loom_buf *bufs[1 + LOOM_NUM_SEGMENTS]; /* insns, then segments */
	struct loom_hw_segment seg[LOOM_NUM_SEGMENTS];
	/* result, valid once ENDED */
	u32 status;                     /* enum loom_uapi_job_status */
	u32 error, error_insn;
	u64 counters[LOOM_CNT_COUNT];
};

void loom_job_init_dev(struct loom_dev *ldev);
int loom_job_submit(struct loom_file *lf, struct loom_job *job);
int loom_job_wait(struct loom_file *lf, u32 timeout_ms,
		  struct loom_uapi_wait *out);
int loom_job_reset(struct loom_file *lf);
void loom_job_release(struct loom_file *lf);
void loom_job_stop_dev(struct loom_dev *ldev);
bool loom_job_uses(struct loom_file *lf, const struct loom_buf *buf);
void loom_job_put(struct loom_job *job);
irqreturn_t loom_job_irq(int irq, void *data);

/* ---- loom_ioctl.c ---- */

long loom_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

/* ---- loom_testdev.c: the software test device ---- */

extern const struct loom_reg_ops loom_testdev_regs;
int loom_testdev_create(struct loom_dev *ldev);
void loom_testdev_destroy(struct loom_dev *ldev);
int loom_testdev_register(unsigned int count);
void loom_testdev_unregister(void);

#endif /* LOOM_DRV_H */
