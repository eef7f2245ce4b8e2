// SPDX-License-Identifier: GPL-2.0
/*
 * loom_ioctl.c - the ioctls of include/loom/loom_uapi.h.
 *
 * This file is the border with user space: every structure is copied in
 * with copy_from_user() and out with copy_to_user(), and every number in it
 * is checked here before anything else of the driver sees it:
 *
 *   - flags and reserved fields must be zero (EINVAL), so that they can get
 *     a meaning later without old binaries silently asking for it;
 *   - sizes must be non-zero multiples of LOOM_UAPI_SIZE_ALIGN within the
 *     module's limits, counts within the structure's bounds (a segment
 *     count of at most 8, an instruction count that fits its buffer),
 *     timeouts at most LOOM_UAPI_MAX_TIMEOUT_MS (EINVAL);
 *   - handles must name a live buffer of the calling file (ENOENT: a
 *     handle of another file is indistinguishable from a free one).
 *
 * With debug=1 the reason for every refusal is logged.  The ioctls
 * themselves are thin: buffers are loom_buf.c's, jobs loom_job.c's.
 */
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "loom_drv.h"

/* Logs why a request was refused (debug=1) and returns `err`. */
#define refuse(lf, err, fmt, ...)                                              \
	({                                                                     \
		loom_dbg((lf)->ldev, IOCTL, fmt, ##__VA_ARGS__);               \
		(err);                                                         \
	})

static bool nonzero(const void *p, size_t n)
{
	return memchr_inv(p, 0, n) != NULL;
}

static int ioctl_query(struct loom_file *lf, void __user *uarg)
{
	struct loom_dev *ldev = lf->ldev;
	struct loom_uapi_query q = {
		.uapi_version = LOOM_UAPI_VERSION,
		.hw_id = LOOM_HW_ID,
		.hw_version = ldev->hw.hw_version,
		.config_hash = ldev->hw.config_hash,
		.num_segments = LOOM_NUM_SEGMENTS,
		.num_counters = LOOM_CNT_COUNT,
		.flags = (ldev->hw.testdev ? LOOM_QUERY_F_TESTDEV : 0) |
			 (ldev->hw.irq >= 0 ? LOOM_QUERY_F_IRQ : 0),
		.size_align = LOOM_UAPI_SIZE_ALIGN,
		.max_buffer_size = (u64)loom_max_buffer_mb << 20,
		.max_file_bytes = (u64)loom_max_file_mb << 20,
		.max_file_buffers = loom_max_file_buffers,
		.default_timeout_ms = loom_timeout_ms,
	};

	spin_lock_irq(&ldev->lock);
	if (ldev->wedged)
		q.flags |= LOOM_QUERY_F_WEDGED;
	q.stat_jobs = ldev->stat_jobs;
	q.stat_timeouts = ldev->stat_timeouts;
	q.stat_resets = ldev->stat_resets;
	spin_unlock_irq(&ldev->lock);
	return copy_to_user(uarg, &q, sizeof(q)) ? -EFAULT : 0;
}

static int ioctl_alloc(struct loom_file *lf, void __user *uarg)
{
	struct loom_uapi_alloc a;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags || nonzero(a.reserved, sizeof(a.reserved)))
		return refuse(lf, -EINVAL, "ALLOC: flags and reserved must be 0");
	if (!a.size || a.size % LOOM_UAPI_SIZE_ALIGN)
		return refuse(lf, -EINVAL, "ALLOC: size %llu is not a non-zero multiple of %u",
			      a.size, LOOM_UAPI_SIZE_ALIGN);
	if (a.size > (u64)loom_max_buffer_mb << 20)
		return refuse(lf, -EINVAL, "ALLOC: size %llu exceeds max_buffer_mb=%u", a.size,
			      loom_max_buffer_mb);
	mutex_lock(&lf->lock);
	ret = loom_buf_alloc(lf, a.size, &a.handle, &a.mmap_offset);
	mutex_unlock(&lf->lock);
	if (ret)
		return refuse(lf, ret, "ALLOC: %llu bytes: %d", a.size, ret);
	if (copy_to_user(uarg, &a, sizeof(a))) {
		mutex_lock(&lf->lock);
		loom_buf_free(lf, a.handle);
		mutex_unlock(&lf->lock);
		return -EFAULT;
	}
	return 0;
}

static int ioctl_free(struct loom_file *lf, void __user *uarg)
{
	struct loom_uapi_free f;
	int ret;

	if (copy_from_user(&f, uarg, sizeof(f)))
		return -EFAULT;
	if (f.flags || f.reserved)
		return refuse(lf, -EINVAL, "FREE: flags and reserved must be 0");
	mutex_lock(&lf->lock);
	ret = loom_buf_free(lf, f.handle);
	mutex_unlock(&lf->lock);
	return ret;
}

/* One segment-table entry into job->seg[s]; called with lf->lock held. */
static int take_segment(struct loom_file *lf, struct loom_job *job, int s,
			const struct loom_uapi_segment *e)
{
	struct loom_buf *buf;

	if (e->reserved)
		return refuse(lf, -EINVAL, "SUBMIT: segment %d: reserved must be 0", s);
	if (!e->handle) {
		if (e->size)
			return refuse(lf, -EINVAL, "SUBMIT: segment %d: unmapped with size %llu",
				      s, e->size);
		return 0;
	}
	buf = loom_buf_lookup(lf, e->handle);
	if (!buf)
		return refuse(lf, -ENOENT, "SUBMIT: segment %d: no buffer %u in this file", s,
			      e->handle);
	if (e->size > buf->size)
		return refuse(lf, -EINVAL, "SUBMIT: segment %d: size %llu > buffer's %llu", s,
			      e->size, buf->size);
	loom_buf_get(buf);
	job->bufs[1 + s] = buf;
	job->seg[s].base = buf->dma;
	job->seg[s].size = e->size ? e->size : buf->size;
	return 0;
}

/* Fills `job` from the request; called with lf->lock held. */
static int build_job(struct loom_file *lf, struct loom_job *job,
		     const struct loom_uapi_submit *req, const struct loom_uapi_segment *segs)
{
	struct loom_buf *insns = loom_buf_lookup(lf, req->insn_handle);
	u32 s;
	int ret;

	if (!insns)
		return refuse(lf, -ENOENT, "SUBMIT: no instruction buffer %u in this file",
			      req->insn_handle);
	if ((u64)req->insn_count * LOOM_UAPI_INSN_BYTES > insns->size)
		return refuse(lf, -EINVAL, "SUBMIT: %u instructions overrun a %llu-byte buffer",
			      req->insn_count, insns->size);
	loom_buf_get(insns);
	job->bufs[0] = insns;
	job->insn_addr = insns->dma;
	job->insn_count = req->insn_count;
	job->timeout_ms = req->timeout_ms ? req->timeout_ms : loom_timeout_ms;
	for (s = 0; s < req->num_segments; s++) {
		ret = take_segment(lf, job, s, &segs[s]);
		if (ret)
			return ret;
	}
	return 0;
}

static int check_submit(struct loom_file *lf, const struct loom_uapi_submit *req)
{
	if (req->flags || req->reserved0 || nonzero(req->reserved, sizeof(req->reserved)))
		return refuse(lf, -EINVAL, "SUBMIT: flags and reserved must be 0");
	if (req->num_segments > LOOM_UAPI_MAX_SEGMENTS)
		return refuse(lf, -EINVAL, "SUBMIT: %u segments, at most %u", req->num_segments,
			      LOOM_UAPI_MAX_SEGMENTS);
	if (!req->insn_count)
		return refuse(lf, -EINVAL, "SUBMIT: no instructions");
	if (req->timeout_ms > LOOM_UAPI_MAX_TIMEOUT_MS)
		return refuse(lf, -EINVAL, "SUBMIT: timeout %u ms > %u", req->timeout_ms,
			      LOOM_UAPI_MAX_TIMEOUT_MS);
	return 0;
}

static int ioctl_submit(struct loom_file *lf, void __user *uarg)
{
	struct loom_uapi_segment segs[LOOM_UAPI_MAX_SEGMENTS];
	struct loom_uapi_submit req;
	struct loom_job *job;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = check_submit(lf, &req);
	if (ret)
		return ret;
	if (req.num_segments &&
	    copy_from_user(segs, u64_to_user_ptr(req.segments_ptr),
			   req.num_segments * sizeof(segs[0])))
		return -EFAULT;
	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	kref_init(&job->ref);
	INIT_LIST_HEAD(&job->node);
	mutex_lock(&lf->lock);
	ret = build_job(lf, job, &req, segs);
	if (!ret)
		ret = loom_job_submit(lf, job);
	mutex_unlock(&lf->lock);
	if (ret)
		loom_job_put(job);
	return ret;
}

static int ioctl_wait(struct loom_file *lf, void __user *uarg)
{
	struct loom_uapi_wait w, out = { 0 };
	int ret;

	if (copy_from_user(&w, uarg, sizeof(w)))
		return -EFAULT;
	if (w.flags || nonzero(w.reserved, sizeof(w.reserved)))
		return refuse(lf, -EINVAL, "WAIT: flags and reserved must be 0");
	if (w.timeout_ms > LOOM_UAPI_MAX_TIMEOUT_MS)
		return refuse(lf, -EINVAL, "WAIT: timeout %u ms > %u", w.timeout_ms,
			      LOOM_UAPI_MAX_TIMEOUT_MS);
	out.timeout_ms = w.timeout_ms;
	ret = loom_job_wait(lf, w.timeout_ms ? w.timeout_ms : loom_timeout_ms, &out);
	if (ret && ret != -ETIMEDOUT && ret != -ECANCELED)
		return ret;
	return copy_to_user(uarg, &out, sizeof(out)) ? -EFAULT : ret;
}

static int ioctl_reset(struct loom_file *lf, void __user *uarg)
{
	struct loom_uapi_reset r;
	int ret;

	if (copy_from_user(&r, uarg, sizeof(r)))
		return -EFAULT;
	if (r.flags || r.reserved)
		return refuse(lf, -EINVAL, "RESET: flags and reserved must be 0");
	mutex_lock(&lf->lock);
	ret = loom_job_reset(lf);
	mutex_unlock(&lf->lock);
	return ret;
}

long loom_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct loom_file *lf = filp->private_data;
	void __user *uarg = (void __user *)arg;

	loom_dbg(lf->ldev, IOCTL, "cmd 0x%08x", cmd);
	if (READ_ONCE(lf->ldev->gone) && cmd != LOOM_IOCTL_FREE)
		return -ENODEV;
	switch (cmd) {
	case LOOM_IOCTL_QUERY:
		return ioctl_query(lf, uarg);
	case LOOM_IOCTL_ALLOC:
		return ioctl_alloc(lf, uarg);
	case LOOM_IOCTL_FREE:
		return ioctl_free(lf, uarg);
	case LOOM_IOCTL_SUBMIT:
		return ioctl_submit(lf, uarg);
	case LOOM_IOCTL_WAIT:
		return ioctl_wait(lf, uarg);
	case LOOM_IOCTL_RESET:
		return ioctl_reset(lf, uarg);
	default:
		return -ENOTTY;
	}
}
