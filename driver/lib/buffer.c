/*
 * buffer.c - DMA buffers: memory both the host and the accelerator reach.
 *
 * The backend decides what a buffer is (malloc'd memory for fsim, a
 * DMA-coherent allocation mmap'd from the kernel driver, an XRT BO); this
 * file only wraps its answer in a handle that remembers its device, so that
 * a job can check that every buffer it names belongs to the device that
 * runs it.  A buffer must be freed before its device is closed.
 */
#include <stdlib.h>

#include "runtime.h"

loom_status loom_buffer_alloc(loom_device *dev, size_t bytes, loom_buffer **out) {
  if (!dev || !out) return LOOM_E_INVALID;
  *out = NULL;
  if (bytes == 0) return loom_fail(dev->msg, LOOM_E_INVALID, "cannot allocate a buffer of 0 bytes");
  loom_buffer *buf = calloc(1, sizeof *buf);
  if (!buf) return loom_fail(dev->msg, LOOM_E_NOMEM, "out of host memory");
  loom_status st = dev->ops->alloc(dev->state, bytes, &buf->bb, dev->msg);
  if (st != LOOM_OK) {
    free(buf);
    return st;
  }
  LOOM_ASSERT(buf->bb.host && buf->bb.size >= bytes);
  buf->bb.size = bytes;
  buf->dev = dev;
  *out = buf;
  return LOOM_OK;
}

void loom_buffer_free(loom_buffer *buf) {
  if (!buf) return;
  buf->dev->ops->free(buf->dev->state, &buf->bb);
  free(buf);
}

void *loom_buffer_map(loom_buffer *buf) { return buf ? buf->bb.host : NULL; }

size_t loom_buffer_size(const loom_buffer *buf) { return buf ? buf->bb.size : 0; }

loom_status loom_buffer_sync(loom_buffer *buf, loom_sync_dir dir) {
  if (!buf) return LOOM_E_INVALID;
  if (dir != LOOM_SYNC_TO_DEVICE && dir != LOOM_SYNC_FROM_DEVICE)
    return loom_fail(buf->dev->msg, LOOM_E_INVALID, "invalid sync direction %d", (int)dir);
  if (!buf->dev->ops->sync) return LOOM_OK;
  return buf->dev->ops->sync(buf->dev->state, &buf->bb, dir, buf->dev->msg);
}
