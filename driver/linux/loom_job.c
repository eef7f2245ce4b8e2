// SPDX-License-Identifier: GPL-2.0
/*
 * loom_job.c - jobs: the queue, the completion interrupt, the watchdog and
 * every way a job can end.
 *
 * The accelerator runs one job at a time.  Jobs of all open files wait in
 * ldev->queue in submission order; ldev->running is the one on the
 * hardware.  A job's state only moves forward, QUEUED -> RUNNING -> ENDED,
 * and always under ldev->lock; QUEUED -> RUNNING also under hw_lock, so a
 * holder of hw_lock sees every state but ENDED stay put.
 *
 * A job ends in exactly one of these ways, each in one function:
 *
 *   - done: the interrupt handler (or the polling work on a board without
 *     an interrupt line) sees ISR.DONE, collects ERR_STATUS, ERR_INSN and
 *     the counters, and ends it DONE;
 *   - watchdog: still running timeout_ms after it started; ended TIMEOUT,
 *     the device reset, the next job started;
 *   - WAIT ran out of time: ended TIMEOUT (reset first if it was running,
 *     simply dequeued if it was still waiting for the device);
 *   - RESET ioctl, or its file was closed: ended ABORTED, same handling;
 *   - the device is unbound: every job ended ABORTED.
 *
 * Starting a job programs registers and may sleep (the idle poll), so the
 * interrupt handler never starts one: it schedules kick_work.  Everything
 * that writes more than one register (start, reset) holds hw_lock, and the
 * handler, which only reads results and acknowledges ISR, holds ldev->lock
 * instead; a completion that races with an abort finds no running job and
 * is merely acknowledged.
 *
 * References: the file holds one on its job until WAIT or RESET takes the
 * result (or the file closes); the device holds one while the job is
 * queued or running; a waiter holds one while it sleeps.
 */
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "loom_drv.h"

/* Polling interval when the device has no interrupt line. */
#define LOOM_POLL_JIFFIES 1

static void job_release(struct kref *ref)
{
	kfree(container_of(ref, struct loom_job, ref));
}

void loom_job_put(struct loom_job *job)
{
	kref_put(&job->ref, job_release);
}

/* Ends `job` with `status` and drops the device's reference.  Under lock. */
static void end_job_locked(struct loom_dev *ldev, struct loom_job *job, u32 status)
{
	if (job->state == LOOM_JOB_QUEUED)
		list_del_init(&job->node);
	if (ldev->running == job)
		ldev->running = NULL;
	job->status = status;
	job->state = LOOM_JOB_ENDED;
	if (status == LOOM_JOB_DONE)
		ldev->stat_jobs++;
	else if (status == LOOM_JOB_TIMEOUT)
		ldev->stat_timeouts++;
	loom_dbg(ldev, JOB, "job %p ended: status %u error %u at insn %u", job,
		 status, job->error, job->error_insn);
	wake_up_all(&ldev->done_wq);
	loom_job_put(job);
}

static bool job_ended(struct loom_dev *ldev, struct loom_job *job)
{
	unsigned long flags;
	bool ended;

	spin_lock_irqsave(&ldev->lock, flags);
	ended = job->state == LOOM_JOB_ENDED;
	spin_unlock_irqrestore(&ldev->lock, flags);
	return ended;
}

/* SOFT_RESET; called with hw_lock held. */
static void reset_locked(struct loom_dev *ldev)
{
	loom_hw_reset(ldev);
	spin_lock_irq(&ldev->lock);
	ldev->stat_resets++;
	spin_unlock_irq(&ldev->lock);
}

/*
 * Completion: ISR.DONE set means the running job finished, with or without
 * an error.  The interrupt handler proper, also called by the polling work
 * and by the test device (hence irqsave).
 */
irqreturn_t loom_job_irq(int irq, void *data)
{
	struct loom_dev *ldev = data;
	struct loom_job *job;
	unsigned long flags;

	spin_lock_irqsave(&ldev->lock, flags);
	if (!loom_hw_done_pending(ldev)) {
		spin_unlock_irqrestore(&ldev->lock, flags);
		return IRQ_NONE;
	}
	job = ldev->running;
	if (job) {
		loom_hw_collect(ldev, &job->error, &job->error_insn, job->counters);
		end_job_locked(ldev, job, LOOM_JOB_DONE);
	} else {
		/* A job aborted just as it finished: only acknowledge. */
		loom_wr(ldev, LOOM_REG_ISR, LOOM_IRQ_DONE);
		loom_rd(ldev, LOOM_REG_ISR); /* flush the posted write, as in loom_hw_collect */
	}
	spin_unlock_irqrestore(&ldev->lock, flags);
	loom_dbg(ldev, IRQ, "done interrupt, job %p", job);
	if (job)
		schedule_work(&ldev->kick_work);
	return IRQ_HANDLED;
}

/* Starts queued jobs until one is running or the queue is empty.  A job
 * the hardware refuses to start (never idle) is ended ABORTED and the
 * device reset.  Called with hw_lock held. */
static void start_next_locked(struct loom_dev *ldev)
{
	struct loom_job *job;

	for (;;) {
		spin_lock_irq(&ldev->lock);
		if (ldev->gone || ldev->running || list_empty(&ldev->queue)) {
			spin_unlock_irq(&ldev->lock);
			return;
		}
		job = list_first_entry(&ldev->queue, struct loom_job, node);
		list_del_init(&job->node);
		job->state = LOOM_JOB_RUNNING;
		job->deadline = jiffies + msecs_to_jiffies(job->timeout_ms);
		ldev->running = job;
		spin_unlock_irq(&ldev->lock);

		loom_dbg(ldev, JOB, "job %p: %u instructions, timeout %u ms", job,
			 job->insn_count, job->timeout_ms);
		if (!loom_hw_start(ldev, job->insn_addr, job->insn_count, job->seg)) {
			mod_delayed_work(system_wq, &ldev->watchdog,
					 msecs_to_jiffies(job->timeout_ms));
			if (ldev->irq < 0)
				mod_delayed_work(system_wq, &ldev->poll_work, LOOM_POLL_JIFFIES);
			return;
		}
		spin_lock_irq(&ldev->lock);
		if (ldev->running == job)
			end_job_locked(ldev, job, LOOM_JOB_ABORTED);
		spin_unlock_irq(&ldev->lock);
		reset_locked(ldev);
	}
}

static void kick_fn(struct work_struct *work)
{
	struct loom_dev *ldev = container_of(work, struct loom_dev, kick_work);

	mutex_lock(&ldev->hw_lock);
	start_next_locked(ldev);
	mutex_unlock(&ldev->hw_lock);
}

/* A running job past its deadline is ended TIMEOUT and the device reset;
 * otherwise the watchdog sleeps until the running job's deadline. */
static void watchdog_fn(struct work_struct *work)
{
	struct loom_dev *ldev = container_of(to_delayed_work(work), struct loom_dev, watchdog);
	struct loom_job *job;
	bool expired = false;
	unsigned long left = 0;

	mutex_lock(&ldev->hw_lock);
	spin_lock_irq(&ldev->lock);
	job = ldev->running;
	if (job && time_after_eq(jiffies, job->deadline)) {
		loom_warn(ldev, "job still running after %u ms: resetting the accelerator",
			  job->timeout_ms);
		end_job_locked(ldev, job, LOOM_JOB_TIMEOUT);
		expired = true;
	} else if (job) {
		left = job->deadline - jiffies;
	}
	spin_unlock_irq(&ldev->lock);
	if (expired) {
		reset_locked(ldev);
		start_next_locked(ldev);
	} else if (left) {
		mod_delayed_work(system_wq, &ldev->watchdog, left);
	}
	mutex_unlock(&ldev->hw_lock);
}

/* No interrupt line: look at ISR every LOOM_POLL_JIFFIES while a job runs. */
static void poll_fn(struct work_struct *work)
{
	struct loom_dev *ldev = container_of(to_delayed_work(work), struct loom_dev, poll_work);
	bool running;

	loom_job_irq(-1, ldev);
	spin_lock_irq(&ldev->lock);
	running = ldev->running && !ldev->gone;
	spin_unlock_irq(&ldev->lock);
	if (running)
		mod_delayed_work(system_wq, &ldev->poll_work, LOOM_POLL_JIFFIES);
}

void loom_job_init_dev(struct loom_dev *ldev)
{
	spin_lock_init(&ldev->lock);
	INIT_LIST_HEAD(&ldev->queue);
	init_waitqueue_head(&ldev->done_wq);
	INIT_WORK(&ldev->kick_work, kick_fn);
	INIT_DELAYED_WORK(&ldev->watchdog, watchdog_fn);
	INIT_DELAYED_WORK(&ldev->poll_work, poll_fn);
}

/* Ends `job` with `status` unless it has ended; a running job is stopped
 * by SOFT_RESET and the next queued job started. */
static void abort_job(struct loom_dev *ldev, struct loom_job *job, u32 status)
{
	bool was_running;

	mutex_lock(&ldev->hw_lock);
	spin_lock_irq(&ldev->lock);
	was_running = job->state == LOOM_JOB_RUNNING;
	if (job->state != LOOM_JOB_ENDED)
		end_job_locked(ldev, job, status);
	spin_unlock_irq(&ldev->lock);
	if (was_running) {
		loom_dbg(ldev, JOB, "job %p stopped by SOFT_RESET", job);
		reset_locked(ldev);
		start_next_locked(ldev);
	}
	mutex_unlock(&ldev->hw_lock);
}

/* Queues a job built by the ioctl (one reference, the file's); called with
 * lf->lock held. */
int loom_job_submit(struct loom_file *lf, struct loom_job *job)
{
	struct loom_dev *ldev = lf->ldev;

	if (lf->job)
		return -EBUSY;
	kref_get(&job->ref); /* the device's */
	spin_lock_irq(&ldev->lock);
	if (ldev->gone) {
		spin_unlock_irq(&ldev->lock);
		loom_job_put(job);
		return -ENODEV;
	}
	job->state = LOOM_JOB_QUEUED;
	list_add_tail(&job->node, &ldev->queue);
	spin_unlock_irq(&ldev->lock);
	lf->job = job;
	mutex_lock(&ldev->hw_lock);
	start_next_locked(ldev);
	mutex_unlock(&ldev->hw_lock);
	return 0;
}

static void fill_result(const struct loom_job *job, struct loom_uapi_wait *out)
{
	u32 c;

	out->status = job->status;
	out->error = job->error;
	out->error_insn = job->error_insn;
	out->num_counters = LOOM_CNT_COUNT;
	for (c = 0; c < LOOM_CNT_COUNT; c++)
		out->counters[c] = job->counters[c];
}

/* Takes the file's job off it (its result has been read). */
static void take_job(struct loom_file *lf, struct loom_job *job)
{
	mutex_lock(&lf->lock);
	if (lf->job == job) {
		lf->job = NULL;
		loom_job_put(job);
	}
	mutex_unlock(&lf->lock);
}

static int status_errno(u32 status)
{
	switch (status) {
	case LOOM_JOB_DONE:
		return 0;
	case LOOM_JOB_TIMEOUT:
		return -ETIMEDOUT;
	default:
		return -ECANCELED;
	}
}

/*
 * WAIT.  The file's lock is not held while sleeping, so other threads of
 * the process can still allocate or query; the waiter's own reference
 * keeps the job alive.  A signal leaves the job as it is (-ERESTARTSYS:
 * restarted for SA_RESTART handlers, EINTR otherwise).
 */
int loom_job_wait(struct loom_file *lf, u32 timeout_ms, struct loom_uapi_wait *out)
{
	struct loom_dev *ldev = lf->ldev;
	struct loom_job *job;
	long left;

	mutex_lock(&lf->lock);
	job = lf->job;
	if (job)
		kref_get(&job->ref);
	mutex_unlock(&lf->lock);
	if (!job)
		return -ENOENT;
	left = wait_event_interruptible_timeout(ldev->done_wq, job_ended(ldev, job),
						msecs_to_jiffies(timeout_ms));
	if (left < 0) {
		loom_job_put(job);
		return left;
	}
	if (left == 0)
		abort_job(ldev, job, LOOM_JOB_TIMEOUT);
	fill_result(job, out);
	take_job(lf, job);
	loom_job_put(job);
	return status_errno(out->status);
}

/* RESET: aborts and drops the caller's job, or, when it has none and the
 * accelerator is idle, writes SOFT_RESET.  Called with lf->lock held. */
int loom_job_reset(struct loom_file *lf)
{
	struct loom_dev *ldev = lf->ldev;
	struct loom_job *job = lf->job;
	bool idle;

	if (job) {
		abort_job(ldev, job, LOOM_JOB_ABORTED);
		lf->job = NULL;
		loom_job_put(job);
		return 0;
	}
	mutex_lock(&ldev->hw_lock);
	spin_lock_irq(&ldev->lock);
	idle = !ldev->running && !ldev->gone;
	spin_unlock_irq(&ldev->lock);
	if (idle)
		reset_locked(ldev);
	mutex_unlock(&ldev->hw_lock);
	return 0;
}

/* The file is closing: stop its job before its buffers go. */
void loom_job_release(struct loom_file *lf)
{
	struct loom_job *job = lf->job;

	if (!job)
		return;
	abort_job(lf->ldev, job, LOOM_JOB_ABORTED);
	lf->job = NULL;
	loom_job_put(job);
}

/* Does the file's unfinished job use `buf`?  Called with lf->lock held. */
bool loom_job_uses(struct loom_file *lf, const struct loom_buf *buf)
{
	struct loom_job *job = lf->job;
	bool uses = false;
	int i;

	if (!job || job_ended(lf->ldev, job))
		return false;
	for (i = 0; i < ARRAY_SIZE(job->bufs); i++)
		uses |= job->bufs[i] == buf;
	return uses;
}

/* The device is going away: end every job, stop the hardware, and make
 * sure no work item runs any more. */
void loom_job_stop_dev(struct loom_dev *ldev)
{
	struct loom_job *job, *tmp;
	bool was_running;

	mutex_lock(&ldev->hw_lock);
	spin_lock_irq(&ldev->lock);
	WRITE_ONCE(ldev->gone, true);
	was_running = ldev->running;
	if (ldev->running)
		end_job_locked(ldev, ldev->running, LOOM_JOB_ABORTED);
	list_for_each_entry_safe(job, tmp, &ldev->queue, node)
		end_job_locked(ldev, job, LOOM_JOB_ABORTED);
	spin_unlock_irq(&ldev->lock);
	if (was_running)
		reset_locked(ldev);
	mutex_unlock(&ldev->hw_lock);
	cancel_work_sync(&ldev->kick_work);
	cancel_delayed_work_sync(&ldev->watchdog);
	cancel_delayed_work_sync(&ldev->poll_work);
}
