/*
 * job.c - submitting jobs and waiting for them.
 *
 * A job is an instruction stream in a buffer plus a segment table of
 * buffers.  This file checks what a backend must not have to (buffers of
 * another device, a stream longer than its buffer, a second job in flight)
 * and turns a backend's answer into the one error convention of loom.h:
 *
 *   - the accelerator stopped the job: LOOM_E_JOB, with a message such as
 *     "job failed: SEGMENT at insn 12: <the backend's detail>";
 *   - the job did not finish in time: the device is reset here (through the
 *     backend's optional reset) so that it accepts the next job, and
 *     LOOM_E_TIMEOUT is returned with res->error = LOOM_ERR_TIMEOUT.
 *
 * Backends therefore never reset on their own in wait().
 */
#include <stdio.h>
#include <string.h>

#include "loom/isa.h"
#include "runtime.h"

static loom_status check_job(loom_device *dev, const struct loom_job *job) {
  if (!job->insns) return loom_fail(dev->msg, LOOM_E_INVALID, "job has no instruction buffer");
  if (job->insns->dev != dev)
    return loom_fail(dev->msg, LOOM_E_INVALID, "instruction buffer belongs to another device");
  if (job->insn_count == 0) return loom_fail(dev->msg, LOOM_E_INVALID, "job has no instructions");
  if ((uint64_t)job->insn_count * LOOM_INSN_BYTES > job->insns->bb.size)
    return loom_fail(dev->msg, LOOM_E_INVALID,
                     "job has %u instructions but its buffer holds only %zu bytes",
                     job->insn_count, job->insns->bb.size);
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++)
    if (job->segments[s] && job->segments[s]->dev != dev)
      return loom_fail(dev->msg, LOOM_E_INVALID, "segment %d: buffer belongs to another device",
                       s);
  return LOOM_OK;
}

loom_status loom_job_submit(loom_device *dev, const struct loom_job *job) {
  if (!dev) return LOOM_E_INVALID;
  if (!job) return loom_fail(dev->msg, LOOM_E_INVALID, "loom_job_submit: NULL job");
  if (dev->job_pending)
    return loom_fail(dev->msg, LOOM_E_INVALID, "a job is already in flight on this device");
  loom_status st = check_job(dev, job);
  if (st != LOOM_OK) return st;
  const struct loom_backend_buffer *segs[LOOM_NUM_SEGMENTS];
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++)
    segs[s] = job->segments[s] ? &job->segments[s]->bb : NULL;
  st = dev->ops->submit(dev->state, &job->insns->bb, job->insn_count, segs, dev->msg);
  if (st == LOOM_OK) dev->job_pending = 1;
  return st;
}

/* After a timeout: abort the job so that the device takes the next one. */
static loom_status timed_out(loom_device *dev, uint32_t timeout_ms, struct loom_job_result *res) {
  char detail[LOOM_MSG_MAX];
  snprintf(detail, sizeof detail, "%s", dev->msg);
  res->error = LOOM_ERR_TIMEOUT;
  if (dev->ops->reset) {
    char why[LOOM_MSG_MAX] = "";
    if (dev->ops->reset(dev->state, why) != LOOM_OK)
      return loom_fail(dev->msg, LOOM_E_TIMEOUT, "job timed out after %u ms and reset failed: %s",
                       timeout_ms, why);
  }
  return loom_fail(dev->msg, LOOM_E_TIMEOUT, "job timed out after %u ms%s%s; device reset",
                   timeout_ms, detail[0] ? ": " : "", detail);
}

static loom_status job_failed(loom_device *dev, const struct loom_job_result *res) {
  const char *detail = res->message[0] ? res->message : loom_error_text(res->error);
  return loom_fail(dev->msg, LOOM_E_JOB, "job failed: %s at insn %u: %s",
                   loom_error_name(res->error), res->error_insn, detail);
}

loom_status loom_job_wait(loom_device *dev, uint32_t timeout_ms, struct loom_job_result *res) {
  struct loom_job_result scratch;
  if (!dev) return LOOM_E_INVALID;
  if (!res) res = &scratch;
  memset(res, 0, sizeof *res);
  if (!dev->job_pending) return loom_fail(dev->msg, LOOM_E_INVALID, "no job in flight to wait for");
  dev->msg[0] = '\0';
  loom_status st = dev->ops->wait(dev->state, timeout_ms, res, dev->msg);
  dev->job_pending = 0;
  res->message[LOOM_MSG_MAX - 1] = '\0';
  if (st == LOOM_E_TIMEOUT) return timed_out(dev, timeout_ms, res);
  if (st != LOOM_OK) return st;
  if (res->error != LOOM_ERR_NONE) return job_failed(dev, res);
  return LOOM_OK;
}

loom_status loom_job_run(loom_device *dev, const struct loom_job *job, uint32_t timeout_ms,
                         struct loom_job_result *res) {
  loom_status st = loom_job_submit(dev, job);
  if (st != LOOM_OK) {
    if (res) memset(res, 0, sizeof *res);
    return st;
  }
  return loom_job_wait(dev, timeout_ms, res);
}
