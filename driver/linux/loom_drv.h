/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loom_drv.h - the map of loom.ko: the objects every file of the driver
 * shares, grouped under the file that owns them.
 *
 *   loom_drv.c      module parameters, platform driver, misc device, file
 *                   open/release, the device's lifetime
 *   loom_hw.c       the register programming sequence (docs/registers.md;
 *                   loom_hw.h, the layer tests/kernel runs against tsim)
 *   loom_buf.c      DMA-coherent buffers, their handles, mmap, and the
 *                   per-user quotas
 *   loom_job.c      the job queue, completion interrupt, watchdog, aborts,
 *                   and the wedged state after a failed SOFT_RESET
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
 *   ldev->lock     (spinlock) the queue, the running job, job states, the
 *                             wedged flag and the pinned jobs; taken in the
 *                             interrupt handler
 *   ldev->mem_lock (spinlock) the list of allocated buffer memory and the
 *                             per-user accounts
 *   testdev lock   (spinlock) the fake register file, innermost
 *
 * Lifetimes: a struct loom_dev is reference counted (every open file holds
 * one), so unbinding the device while files are open leaves them working
 * on a device marked gone (-ENODEV).  A buffer is reference counted too:
 * its handle, every VMA that maps it and every job that names it hold
 * one, so FREE of a mapped buffer only drops the handle and the memory
 * goes when the last mapping or job does.  A job is owned by its file
 * and, while queued or running, referenced by the device; after a failed
 * SOFT_RESET the device keeps it (ldev->pinned), and through it the
 * memory the wedged accelerator may still write, until a reset succeeds.
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
#include "loom_hw.h"

#define LOOM_DRV_NAME "loom"
/* The device-tree binding (docs/linux-driver.md, bitstreams/boards.def). */
#define LOOM_DT_COMPATIBLE "loom,accel-1.0"
#define LOOM_TESTDEV_NAME "loom-testdev"

/* ---- loom_drv.c: module parameters (and `debug`, in loom_hw.h) ---- */

extern unsigned int loom_timeout_ms;    /* default job and wait timeout */
extern unsigned int loom_max_buffer_mb; /* largest buffer */
extern unsigned int loom_max_file_mb;   /* all buffers of one open file */
extern unsigned int loom_max_file_buffers;
extern unsigned int loom_max_user_mb;   /* buffer memory of one user */
extern unsigned int loom_max_user_buffers; /* handles of one user */

/* ---- loom_drv.c: the device ---- */

struct loom_job;
struct loom_dev;

struct loom_dev {
	struct kref ref;
	struct device *dev;             /* the platform device (referenced) */
	struct miscdevice misc;
	char name[16];                  /* "loomN" */
	int id;                         /* N */
	bool gone;                      /* unbound: every ioctl fails -ENODEV */

	struct loom_hw hw;              /* registers, IRQ, identification */
	struct clk_bulk_data *clks;
	int num_clks;

	struct mutex hw_lock;
	struct mutex buf_lock;
	struct idr handles;             /* handle -> struct loom_buf */

	spinlock_t mem_lock;
	struct list_head mem;           /* every struct loom_buf not yet freed */
	struct list_head users;         /* struct loom_user accounts */

	spinlock_t lock;
	struct list_head queue;         /* jobs waiting for the accelerator */
	struct loom_job *running;       /* the job on the accelerator */
	bool wedged;                    /* a SOFT_RESET failed: no new jobs */
	struct list_head pinned;        /* jobs the wedged device may touch */
	wait_queue_head_t done_wq;      /* woken when any job ends */
	struct work_struct kick_work;   /* starts the next queued job */
	struct delayed_work watchdog;   /* aborts a job past its deadline */
	struct delayed_work poll_work;  /* completion when there is no IRQ */

	u64 stat_jobs, stat_timeouts, stat_resets; /* under lock */
};

/* Per open file. */
struct loom_file {
	struct loom_dev *ldev;
	struct loom_user *user;         /* whose quota its buffers count against */
	struct mutex lock;
	u32 nbufs;
	u64 bytes;
	struct loom_job *job;           /* submitted, result not yet taken */
};

void loom_dev_put(struct loom_dev *ldev);

/* ---- loom_buf.c: buffers and per-user quotas ---- */

/* What one user (uid) holds on one device, under ldev->mem_lock. */
struct loom_user {
	struct list_head node;          /* in ldev->users */
	kuid_t uid;
	unsigned int refs;              /* its open files and buffers */
	u32 handles;                    /* live handles */
	u64 bytes;                      /* buffer memory not yet freed */
};

struct loom_buf {
	struct kref ref;                /* the handle + every VMA + every job */
	struct loom_dev *ldev;
	struct loom_user *user;         /* charged for its memory */
	struct list_head mem_node;      /* in ldev->mem until freed */
	struct loom_file *owner;        /* NULL once the handle is freed */
	u32 handle;
	u64 size;                       /* what ALLOC asked for */
	size_t alloc_size;              /* PAGE_ALIGN(size) */
	void *vaddr;
	dma_addr_t dma;
};

struct loom_user *loom_user_get(struct loom_dev *ldev, kuid_t uid);
void loom_user_put(struct loom_dev *ldev, struct loom_user *user);
int loom_buf_alloc(struct loom_file *lf, u64 size, u32 *handle, u64 *offset);
int loom_buf_free(struct loom_file *lf, u32 handle);
void loom_buf_free_all(struct loom_file *lf);
struct loom_buf *loom_buf_lookup(struct loom_file *lf, u32 handle);
void loom_buf_get(struct loom_buf *buf);
void loom_buf_put(struct loom_buf *buf);
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
	/* insns, then segments; each holds a reference on its buffer */
	struct loom_buf *bufs[1 + LOOM_NUM_SEGMENTS];
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
void loom_job_probe_reset(struct loom_dev *ldev);
void loom_job_release_dev(struct loom_dev *ldev);
irqreturn_t loom_job_irq(int irq, void *data);

/* ---- loom_ioctl.c ---- */

long loom_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

/* ---- loom_testdev.c: the software test device ---- */

int loom_testdev_create(struct loom_dev *ldev);
void loom_testdev_destroy(struct loom_dev *ldev);
int loom_testdev_register(unsigned int count);
void loom_testdev_unregister(void);

#endif /* LOOM_DRV_H */
