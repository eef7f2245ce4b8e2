// SPDX-License-Identifier: GPL-2.0
/*
 * loom_buf.c - DMA-coherent buffers, the handles that name them and their
 * mmap.
 *
 * A buffer is one dma_alloc_coherent() block, page aligned (the hardware
 * needs 64 bytes for a segment base and 16 for the instruction stream) and
 * zero-filled.  Its handle is an id in the device-wide table ldev->handles,
 * so that a handle of another file is never mistaken for one of ours: every
 * lookup checks the owner, and user space only ever learns handles and
 * mmap offsets, never bus addresses.
 *
 * The mmap offset of a buffer is its handle in pages.  A mapping takes a
 * reference on the buffer (vm_ops open/close), and so does every job that
 * names it, so FREE of a buffer that is still mapped or used only drops the
 * handle and the memory goes when the last mapping or job does; the
 * mapping in turn keeps the file, and so the device, alive.  FREE of a
 * buffer the file's pending job uses is refused (EBUSY): the accelerator
 * may be reading it.  Every buffer whose memory is not yet freed is on
 * ldev->mem, which is what the test device's "bus" reaches.
 *
 * Quotas (module parameters) bound what one process and one user can take:
 *
 *   - per open file: max_file_buffers handles and max_file_mb MiB of live
 *     handles (EMFILE, ENOMEM);
 *   - per user, the uid that opened the file, over all its files on the
 *     device: max_user_buffers handles and max_user_mb MiB of memory not
 *     yet freed, mapped or pinned buffers included (EDQUOT).  Without it
 *     one user with many files could take all 65,535 handles of the
 *     device's table, or all its DMA memory, from everyone else.
 */
#include <linux/dma-mapping.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/version.h>

#include "loom_drv.h"

/* Handles are 1..LOOM_MAX_HANDLE, so the mmap offset fits in 32 bits even
 * with 64 KiB pages (32-bit user space without large file support). */
#define LOOM_MAX_HANDLE 0xffff

/* ---- per-user accounts ---- */

/* The account of `uid` on the device, created on first use; NULL when out
 * of memory.  Each open file holds one reference. */
struct loom_user *loom_user_get(struct loom_dev *ldev, kuid_t uid)
{
	struct loom_user *fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	struct loom_user *u;

	if (!fresh)
		return NULL;
	spin_lock(&ldev->mem_lock);
	list_for_each_entry(u, &ldev->users, node) {
		if (uid_eq(u->uid, uid)) {
			u->refs++;
			spin_unlock(&ldev->mem_lock);
			kfree(fresh);
			return u;
		}
	}
	fresh->uid = uid;
	fresh->refs = 1;
	list_add(&fresh->node, &ldev->users);
	spin_unlock(&ldev->mem_lock);
	return fresh;
}

static void user_put_locked(struct loom_dev *ldev, struct loom_user *u)
{
	lockdep_assert_held(&ldev->mem_lock);
	if (--u->refs)
		return;
	WARN_ON(u->handles || u->bytes);
	list_del(&u->node);
	kfree(u);
}

void loom_user_put(struct loom_dev *ldev, struct loom_user *u)
{
	spin_lock(&ldev->mem_lock);
	user_put_locked(ldev, u);
	spin_unlock(&ldev->mem_lock);
}

/* Charges one handle and `bytes` of memory to `u`, within the user
 * quotas; -EDQUOT beyond them. */
static int user_charge(struct loom_dev *ldev, struct loom_user *u, u64 bytes)
{
	int ret = 0;

	spin_lock(&ldev->mem_lock);
	if (u->handles >= loom_max_user_buffers ||
	    u->bytes + bytes > (u64)loom_max_user_mb << 20) {
		ret = -EDQUOT;
	} else {
		u->handles++;
		u->bytes += bytes;
		u->refs++; /* the buffer's */
	}
	spin_unlock(&ldev->mem_lock);
	return ret;
}

/* ---- buffer memory ---- */

/* The last reference is gone: the memory goes, and so does its charge.
 * Runs in process context (FREE, munmap, close, a job's release). */
static void buf_release(struct kref *ref)
{
	struct loom_buf *buf = container_of(ref, struct loom_buf, ref);
	struct loom_dev *ldev = buf->ldev;

	spin_lock(&ldev->mem_lock);
	list_del(&buf->mem_node);
	buf->user->bytes -= buf->alloc_size;
	user_put_locked(ldev, buf->user);
	spin_unlock(&ldev->mem_lock);
	loom_dbg(ldev, BUF, "memory of handle %u freed", buf->handle);
	dma_free_coherent(ldev->dev, buf->alloc_size, buf->vaddr, buf->dma);
	kfree(buf);
}

void loom_buf_get(struct loom_buf *buf)
{
	kref_get(&buf->ref);
}

void loom_buf_put(struct loom_buf *buf)
{
	kref_put(&buf->ref, buf_release);
}

/* The handle of a new buffer; -EMFILE when the table is full. */
static int add_handle(struct loom_file *lf, struct loom_buf *buf)
{
	struct loom_dev *ldev = lf->ldev;
	int id;

	mutex_lock(&ldev->buf_lock);
	id = idr_alloc(&ldev->handles, buf, 1, LOOM_MAX_HANDLE + 1, GFP_KERNEL);
	if (id >= 0) {
		buf->handle = id;
		buf->owner = lf;
	}
	mutex_unlock(&ldev->buf_lock);
	return id == -ENOSPC ? -EMFILE : id;
}

/* A new buffer of `size` bytes, charged to the file's user (one handle,
 * its memory) and on ldev->mem; an ERR_PTR when a quota or memory says
 * no.  loom_buf_put() undoes all of it. */
static struct loom_buf *buf_create(struct loom_file *lf, u64 size)
{
	struct loom_dev *ldev = lf->ldev;
	struct loom_buf *buf;
	int ret;

	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	kref_init(&buf->ref);
	buf->ldev = ldev;
	buf->user = lf->user;
	buf->size = size;
	buf->alloc_size = PAGE_ALIGN(size);
	ret = user_charge(ldev, buf->user, buf->alloc_size);
	if (ret)
		goto err_free_buf;
	buf->vaddr = dma_alloc_coherent(ldev->dev, buf->alloc_size, &buf->dma, GFP_KERNEL);
	if (!buf->vaddr) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	if (WARN_ON_ONCE(buf->dma & 63)) {
		ret = -EIO;
		goto err_free_dma;
	}
	spin_lock(&ldev->mem_lock);
	list_add(&buf->mem_node, &ldev->mem);
	spin_unlock(&ldev->mem_lock);
	return buf;

err_free_dma:
	dma_free_coherent(ldev->dev, buf->alloc_size, buf->vaddr, buf->dma);
err_uncharge:
	spin_lock(&ldev->mem_lock);
	buf->user->handles--;
	buf->user->bytes -= buf->alloc_size;
	user_put_locked(ldev, buf->user);
	spin_unlock(&ldev->mem_lock);
err_free_buf:
	kfree(buf);
	return ERR_PTR(ret);
}

/* Called with lf->lock held; size already checked by the ioctl. */
int loom_buf_alloc(struct loom_file *lf, u64 size, u32 *handle, u64 *offset)
{
	struct loom_dev *ldev = lf->ldev;
	struct loom_buf *buf;
	int ret;

	if (lf->nbufs >= loom_max_file_buffers)
		return -EMFILE;
	if (lf->bytes + size > (u64)loom_max_file_mb << 20)
		return -ENOMEM;
	buf = buf_create(lf, size);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = add_handle(lf, buf);
	if (ret < 0) {
		spin_lock(&ldev->mem_lock);
		buf->user->handles--;
		spin_unlock(&ldev->mem_lock);
		loom_buf_put(buf);
		return ret;
	}
	lf->nbufs++;
	lf->bytes += size;
	*handle = buf->handle;
	*offset = (u64)buf->handle << PAGE_SHIFT;
	loom_dbg(ldev, BUF, "handle %u: %llu bytes", buf->handle, size);
	return 0;
}

/* The buffer `handle` if the calling file owns it.  Called with lf->lock
 * held, which keeps it from being freed while the caller uses it. */
struct loom_buf *loom_buf_lookup(struct loom_file *lf, u32 handle)
{
	struct loom_dev *ldev = lf->ldev;
	struct loom_buf *buf;

	mutex_lock(&ldev->buf_lock);
	buf = idr_find(&ldev->handles, handle);
	if (buf && buf->owner != lf)
		buf = NULL;
	mutex_unlock(&ldev->buf_lock);
	return buf;
}

/* Drops the handle; called with buf_lock held. */
static void unlink_handle(struct loom_file *lf, struct loom_buf *buf)
{
	struct loom_dev *ldev = lf->ldev;

	idr_remove(&ldev->handles, buf->handle);
	buf->owner = NULL;
	lf->nbufs--;
	lf->bytes -= buf->size;
	spin_lock(&ldev->mem_lock);
	buf->user->handles--;
	spin_unlock(&ldev->mem_lock);
	loom_buf_put(buf);
}

/* Called with lf->lock held. */
int loom_buf_free(struct loom_file *lf, u32 handle)
{
	struct loom_dev *ldev = lf->ldev;
	struct loom_buf *buf;
	int ret = 0;

	mutex_lock(&ldev->buf_lock);
	buf = idr_find(&ldev->handles, handle);
	if (!buf || buf->owner != lf)
		ret = -ENOENT;
	else if (loom_job_uses(lf, buf))
		ret = -EBUSY;
	else
		unlink_handle(lf, buf);
	mutex_unlock(&ldev->buf_lock);
	loom_dbg(ldev, BUF, "handle %u: %d", handle, ret);
	return ret;
}

/* At release, after the file's job has been stopped. */
void loom_buf_free_all(struct loom_file *lf)
{
	struct loom_dev *ldev = lf->ldev;
	struct loom_buf *buf;
	int id;

	mutex_lock(&ldev->buf_lock);
	idr_for_each_entry(&ldev->handles, buf, id)
		if (buf->owner == lf)
			unlink_handle(lf, buf);
	mutex_unlock(&ldev->buf_lock);
}

static void vma_open(struct vm_area_struct *vma)
{
	struct loom_buf *buf = vma->vm_private_data;

	kref_get(&buf->ref);
}

static void vma_close(struct vm_area_struct *vma)
{
	loom_buf_put(vma->vm_private_data);
}

static const struct vm_operations_struct loom_vm_ops = {
	.open = vma_open,
	.close = vma_close,
};

static void set_vma_flags(struct vm_area_struct *vma)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
#else
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
#endif
}

/* mmap(offset = handle << PAGE_SHIFT): shared mappings of at most the
 * buffer's pages, of buffers the calling file owns. */
int loom_buf_mmap(struct loom_file *lf, struct vm_area_struct *vma)
{
	struct loom_dev *ldev = lf->ldev;
	unsigned long len = vma->vm_end - vma->vm_start;
	struct loom_buf *buf;
	int ret;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_pgoff == 0 || vma->vm_pgoff > LOOM_MAX_HANDLE)
		return -EINVAL;
	mutex_lock(&ldev->buf_lock);
	buf = idr_find(&ldev->handles, vma->vm_pgoff);
	if (buf && buf->owner == lf && len <= buf->alloc_size)
		kref_get(&buf->ref);
	else
		buf = NULL;
	mutex_unlock(&ldev->buf_lock);
	if (!buf)
		return -EINVAL;
	/* dma_mmap_coherent() reads vm_pgoff as an offset into the buffer. */
	vma->vm_pgoff = 0;
	set_vma_flags(vma);
	ret = dma_mmap_coherent(ldev->dev, vma, buf->vaddr, buf->dma, len);
	if (ret) {
		loom_buf_put(buf);
		return ret;
	}
	vma->vm_private_data = buf;
	vma->vm_ops = &loom_vm_ops;
	loom_dbg(ldev, BUF, "handle %u: %lu bytes mapped", buf->handle, len);
	return 0;
}

/*
 * The kernel address of bus range [addr, addr + len) if it lies inside one
 * buffer whose memory is not freed, else NULL.  Only the test device uses
 * it, as its "bus": NULL is what a real accelerator would have read or
 * written as freed memory.  The buffers of a running job cannot be freed
 * (the job holds them), nor those of a job a wedged device may still be
 * running (the device pins the job).
 */
void *loom_buf_bus_to_virt(struct loom_dev *ldev, u64 addr, u64 len)
{
	struct loom_buf *buf;
	void *p = NULL;

	spin_lock(&ldev->mem_lock);
	list_for_each_entry(buf, &ldev->mem, mem_node) {
		if (addr >= buf->dma && len <= buf->alloc_size &&
		    addr - buf->dma <= buf->alloc_size - len) {
			p = buf->vaddr + (addr - buf->dma);
			break;
		}
	}
	spin_unlock(&ldev->mem_lock);
	return p;
}
