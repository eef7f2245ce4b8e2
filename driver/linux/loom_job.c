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
 * queued or running; a waiter holds one while it sleeps.  The job holds
 * one on each of its buffers, so their memory lives as long as the job
 * does, whatever happens to their handles and mappings.  The file's
 * reference is dropped only once the job has ended, after the device's:
 * so the last put, which may free DMA memory, never happens under
 * ldev->lock or in the interrupt handler.
 *
 * A wedged device.  Stopping a running job takes a SOFT_RESET, and a reset
 * can fail (CTRL.IDLE stays 0: the AXI master hangs, a DMA engine does
 * not stop).  Then the accelerator may still read and write the memory of
 * the job it was running, so reset_locked():
 *
 *   - keeps that job, and through it its buffers, in ldev->pinned: closing
 *     the file, FREE and munmap drop handles and mappings but not the
 *     memory, which no other allocation can get while the device may
 *     write it;
 *   - marks the device wedged: SUBMIT fails with EIO, queued jobs end
 *     ABORTED, QUERY reports LOOM_QUERY_F_WEDGED;
 *   - and every later reset that succeeds (the RESET ioctl retries one)
 *     clears the state and releases the pinned jobs.
 *
 * Jobs that ran before the one stopped need no pin: each ended with DONE
 * (the accelerator returns to idle before it signals done) or with a
 * reset that worked.
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
	struct loom_job *job = container_of(ref, struct loom_job, ref);
	int i;

	for (i = 0; i < ARRAY_SIZE(job->bufs); i++)
		if (job->bufs[i])
			loom_buf_put(job->bufs[i]);
	kfree(job);
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
	/* Never the last reference (see the top): no DMA memory is freed
	 * under the spinlock. */
	WARN_ON_ONCE(kref_read(&job->ref) < 2);
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

/* Drops the references of jobs no longer pinned; process context. */
static void put_jobs(struct list_head *jobs)
{
	struct loom_job *job, *tmp;

	list_for_each_entry_safe(job, tmp, jobs, node) {
		list_del_init(&job->node);
		loom_job_put(job);
	}
}

/* The device is wedged: queued jobs end ABORTED.  Under lock. */
static void wedge_locked(struct loom_dev *ldev)
{
	struct loom_job *job, *tmp;

	if (!ldev->wedged)
		loom_err(ldev, "SOFT_RESET failed: device wedged; new jobs fail with EIO and the stopped job's buffers stay allocated until a reset succeeds (RESET ioctl)");
	ldev->wedged = true;
	list_for_each_entry_safe(job, tmp, &ldev->queue, node)
		end_job_locked(ldev, job, LOOM_JOB_ABORTED);
}

/*
 * SOFT_RESET after `stopped` (the job that was running, or NULL) has been
 * ended; called with hw_lock held.  Consumes the caller's reference on
 * `stopped`: kept in ldev->pinned when the reset fails, dropped when it
 * works, which also releases every job pinned before.  0 or -ETIMEDOUT.
 */
static int reset_locked(struct loom_dev *ldev, struct loom_job *stopped)
{
	LIST_HEAD(unpin);
	int ret = loom_hw_reset(&ldev->hw);

	spin_lock_irq(&ldev->lock);
	ldev->stat_resets++;
	if (ret) {
		wedge_locked(ldev);
		if (stopped)
			list_add_tail(&stopped->node, &ldev->pinned);
		stopped = NULL;
	} else if (ldev->wedged) {
		ldev->wedged = false;
		list_splice_init(&ldev->pinned, &unpin);
		loom_info(ldev, "SOFT_RESET worked: device back in service");
	}
	spin_unlock_irq(&ldev->lock);
	if (stopped)
		loom_job_put(stopped);
	put_jobs(&unpin);
	return ret;
}

/* A reference on the running job for reset_locked(), or NULL.  Under lock. */
static struct loom_job *hold_running_locked(struct loom_dev *ldev)
{
	if (ldev->running)
		kref_get(&ldev->running->ref);
	return ldev->running;
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
	if (!loom_hw_done_pending(&ldev->hw)) {
		spin_unlock_irqrestore(&ldev->lock, flags);
		return IRQ_NONE;
	}
	job = ldev->running;
	if (job) {
		loom_hw_collect(&ldev->hw, &job->error, &job->error_insn, job->counters);
		end_job_locked(ldev, job, LOOM_JOB_DONE);
	} else {
		/* A job aborted just as it finished: only acknowledge. */
		loom_hw_ack(&ldev->hw);
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
		if (ldev->gone || ldev->wedged || ldev->running || list_empty(&ldev->queue)) {
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
		if (!loom_hw_start(&ldev->hw, job->insn_addr, job->insn_count, job->seg)) {
			mod_delayed_work(system_wq, &ldev->watchdog,
					 msecs_to_jiffies(job->timeout_ms));
			if (ldev->hw.irq < 0)
				mod_delayed_work(system_wq, &ldev->poll_work, LOOM_POLL_JIFFIES);
			return;
		}
		/* Never started (nothing was written before the idle wait
		 * failed), so the job has nothing to pin. */
		spin_lock_irq(&ldev->lock);
		if (ldev->running == job)
			end_job_locked(ldev, job, LOOM_JOB_ABORTED);
		spin_unlock_irq(&ldev->lock);
		reset_locked(ldev, NULL);
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
	struct loom_job *job, *stopped = NULL;
	unsigned long left = 0;

	mutex_lock(&ldev->hw_lock);
	spin_lock_irq(&ldev->lock);
	job = ldev->running;
	if (job && time_after_eq(jiffies, job->deadline)) {
		loom_warn(ldev, "job still running after %u ms: resetting the accelerator",
			  job->timeout_ms);
		stopped = hold_running_locked(ldev);
		end_job_locked(ldev, job, LOOM_JOB_TIMEOUT);
	} else if (job) {
		left = job->deadline - jiffies;
	}
	spin_unlock_irq(&ldev->lock);
	if (stopped) {
		reset_locked(ldev, stopped);
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
	INIT_LIST_HEAD(&ldev->pinned);
	init_waitqueue_head(&ldev->done_wq);
	INIT_WORK(&ldev->kick_work, kick_fn);
	INIT_DELAYED_WORK(&ldev->watchdog, watchdog_fn);
	INIT_DELAYED_WORK(&ldev->poll_work, poll_fn);
}

/* Ends `job` with `status` unless it has ended; a running job is stopped
 * by SOFT_RESET and the next queued job started. */
static void abort_job(struct loom_dev *ldev, struct loom_job *job, u32 status)
{
	struct loom_job *stopped = NULL;

	mutex_lock(&ldev->hw_lock);
	spin_lock_irq(&ldev->lock);
	if (job->state == LOOM_JOB_RUNNING)
		stopped = hold_running_locked(ldev);
	if (job->state != LOOM_JOB_ENDED)
		end_job_locked(ldev, job, status);
	spin_unlock_irq(&ldev->lock);
	if (stopped) {
		loom_dbg(ldev, JOB, "job %p stopped by SOFT_RESET", job);
		reset_locked(ldev, stopped);
		start_next_locked(ldev);
	}
	mutex_unlock(&ldev->hw_lock);
}

/* Queues a job built by the ioctl (one reference, the file's); called with
 * lf->lock held.  EIO while the device is wedged. */
int loom_job_submit(struct loom_file *lf, struct loom_job *job)
{
	struct loom_dev *ldev = lf->ldev;
	int ret = 0;

	if (lf->job)
		return -EBUSY;
	spin_lock_irq(&ldev->lock);
	if (ldev->gone)
		ret = -ENODEV;
	else if (ldev->wedged)
		ret = -EIO;
	if (ret) {
		spin_unlock_irq(&ldev->lock);
		return ret;
	}
	kref_get(&job->ref); /* the device's */
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

/*
 * RESET: aborts and drops the caller's job, or, when it has none and no
 * job runs, writes SOFT_RESET: the way back from a wedged device.  EIO
 * when the device is (still) wedged afterwards.  Called with lf->lock held.
 */
int loom_job_reset(struct loom_file *lf)
{
	struct loom_dev *ldev = lf->ldev;
	struct loom_job *job = lf->job;
	bool idle, wedged;

	if (job) {
		abort_job(ldev, job, LOOM_JOB_ABORTED);
		lf->job = NULL;
		loom_job_put(job);
	} else {
		mutex_lock(&ldev->hw_lock);
		spin_lock_irq(&ldev->lock);
		idle = !ldev->running && !ldev->gone;
		spin_unlock_irq(&ldev->lock);
		if (idle) {
			reset_locked(ldev, NULL);
			start_next_locked(ldev);
		}
		mutex_unlock(&ldev->hw_lock);
	}
	spin_lock_irq(&ldev->lock);
	wedged = ldev->wedged;
	spin_unlock_irq(&ldev->lock);
	return wedged ? -EIO : 0;
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

/* Probe: a SOFT_RESET clears what an earlier user left running; if it
 * fails, the device starts wedged (nothing of ours to pin yet). */
void loom_job_probe_reset(struct loom_dev *ldev)
{
	mutex_lock(&ldev->hw_lock);
	reset_locked(ldev, NULL);
	mutex_unlock(&ldev->hw_lock);
}

/* The device is going away: end every job, stop the hardware, and make
 * sure no work item runs any more. */
void loom_job_stop_dev(struct loom_dev *ldev)
{
	struct loom_job *job, *tmp, *stopped;
	bool wedged;

	mutex_lock(&ldev->hw_lock);
	spin_lock_irq(&ldev->lock);
	WRITE_ONCE(ldev->gone, true);
	wedged = ldev->wedged;
	stopped = hold_running_locked(ldev);
	if (ldev->running)
		end_job_locked(ldev, ldev->running, LOOM_JOB_ABORTED);
	list_for_each_entry_safe(job, tmp, &ldev->queue, node)
		end_job_locked(ldev, job, LOOM_JOB_ABORTED);
	spin_unlock_irq(&ldev->lock);
	if (stopped || wedged)
		reset_locked(ldev, stopped);
	mutex_unlock(&ldev->hw_lock);
	cancel_work_sync(&ldev->kick_work);
	cancel_delayed_work_sync(&ldev->watchdog);
	cancel_delayed_work_sync(&ldev->poll_work);
}

/*
 * The last reference to the device is gone (unbound, every file closed):
 * its clocks are off and the test device's work cancelled, so nothing can
 * reach the memory of jobs still pinned by a failed reset any more.
 */
void loom_job_release_dev(struct loom_dev *ldev)
{
	LIST_HEAD(unpin);

	if (!list_empty(&ldev->pinned))
		loom_warn(ldev, "freeing the buffers a wedged accelerator held; it is unbound now");
	list_splice_init(&ldev->pinned, &unpin);
	put_jobs(&unpin);
}
