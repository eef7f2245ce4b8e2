/*
 * model.c - a .loom model on a device: load, set inputs, run, read outputs.
 *
 * Loading trusts nothing: the file is parsed and validated by loomfile.c,
 * refused when it was built for another hardware configuration, and every
 * index this file follows (buffers of tensors and jobs, jobs and tensors of
 * steps, instruction ranges) is checked again here before it is used, so a
 * parser gap cannot become an out-of-bounds access.  Then:
 *
 *   - one device buffer per file buffer: CONST ones hold their DATA bytes,
 *     WORK ones are zeroed (activations, inputs, outputs);
 *   - one instruction buffer per job, holding that job's slice of INSNS;
 *   - the input and output tensors are listed in file order with the type
 *     the user reads and writes (user_dtype).
 *
 * A run executes the STEPS in order: a JOB step runs a job whose segment
 * table maps the model's buffers; a HOST step runs a host op (hostops.c) on
 * tensors in mapped buffers, or the native code the file carries for it
 * (HOSTCODE, hostcode.c) when that code is for this machine and the user
 * consented to it (a signature with their key, or the device's
 * trust_native); a KERNEL step (format 1.3) runs an ONNX op through the
 * portable host kernels (driver/core/kernel.h) on plain tensors, with the
 * attributes the file lists.  A kernel with data-dependent results
 * (NonZero, Unique, ...) gets its results' dims as a capacity and reports
 * the real ones: the model keeps every tensor's current dims, which later
 * steps and the caller (loom_model_output) see.  Host writes are synced to
 * the device right
 * after they happen and job outputs synced back right after each job, so
 * every step sees the previous one's results on any backend.  Per-job
 * results (error, counters) of the last run are kept; a job that several
 * steps run has its counters summed.
 *
 * For profiles (docs/profiling.md) the model also keeps each step's wall
 * time, the file's JOBMETA as loom_job_info, and, while tracing, a copy of
 * each job's timeline taken from the device right after the job.  For
 * progress displays it reports each step as it starts and, through the
 * backend's job-progress hook, how far a long job has got, as a fraction
 * of the whole run weighed by the compiler's cycle estimates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "driver/core/hostops.h"
#include "loom/isa.h"
#include "model_int.h"

/* ---- validation of what the runtime indexes ---- */

loom_status model_bad(loom_model *m, char msg[LOOM_MSG_MAX], const char *what, uint32_t i,
                       const char *why) {
  return loom_fail(msg, LOOM_E_FORMAT, "%s: %s %u: %s", m->name, what, i, why);
}

static loom_status check_buffers(loom_model *m, char msg[LOOM_MSG_MAX]) {
  const struct loom_file *f = &m->file;
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    const struct loom_file_buffer *b = &f->buffers[i];
    if (b->size == 0 || (uint64_t)(size_t)b->size != b->size) return model_bad(m, msg, "buffer", i, "invalid size");
    if (b->kind >= LOOM_BUFKIND_COUNT) return model_bad(m, msg, "buffer", i, "invalid kind");
    if (b->kind == LOOM_BUFKIND_CONST &&
        (b->data_offset > f->data_size || b->size > f->data_size - b->data_offset))
      return model_bad(m, msg, "buffer", i, "initial data lies outside the DATA section");
  }
  return LOOM_OK;
}

static int dtype_ok(uint32_t t) { return t > LOOM_DT_INVALID && t < LOOM_FILE_DT_COUNT_1_3; }

static loom_status check_tensor(loom_model *m, uint32_t i, char msg[LOOM_MSG_MAX]) {
  const struct loom_file *f = &m->file;
  const struct loom_file_tensor *t = &f->tensors[i];
  if (t->buffer >= f->buffer_count) return model_bad(m, msg, "tensor", i, "invalid buffer index");
  if (!dtype_ok(t->dtype) || (t->user_dtype && !dtype_ok(t->user_dtype)))
    return model_bad(m, msg, "tensor", i, "invalid dtype");
  if (t->role >= LOOM_ROLE_COUNT) return model_bad(m, msg, "tensor", i, "invalid role");
  uint64_t n = loom_tensor_stored_elems(t);
  if (!n && !loom_file_tensor_empty(t)) return model_bad(m, msg, "tensor", i, "invalid shape or layout");
  if (n * loom_dtype_size((loom_dtype)t->dtype) != t->bytes)
    return model_bad(m, msg, "tensor", i, "byte size does not match dtype, layout and shape");
  uint64_t size = f->buffers[t->buffer].size;
  if (t->offset > size || t->bytes > size - t->offset)
    return model_bad(m, msg, "tensor", i, "extends past the end of its buffer");
  return LOOM_OK;
}

static loom_status check_job(loom_model *m, uint32_t i, char msg[LOOM_MSG_MAX]) {
  const struct loom_file *f = &m->file;
  const struct loom_file_job *j = &f->jobs[i];
  if (j->insn_count == 0) return model_bad(m, msg, "job", i, "has no instructions");
  if (j->insn_first > f->insn_count || j->insn_count > f->insn_count - j->insn_first)
    return model_bad(m, msg, "job", i, "instruction range lies outside the INSNS section");
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++)
    if (j->segments[s] != LOOM_FILE_NO_BUFFER && j->segments[s] >= f->buffer_count)
      return model_bad(m, msg, "job", i, "segment maps an invalid buffer index");
  return LOOM_OK;
}

static int tensor_ref_ok(const struct loom_file *f, uint32_t t) {
  return t == LOOM_FILE_NO_BUFFER || t < f->tensor_count;
}

static loom_status check_step(loom_model *m, uint32_t i, char msg[LOOM_MSG_MAX]) {
  const struct loom_file *f = &m->file;
  const struct loom_file_step *s = &f->steps[i];
  if (s->kind == LOOM_STEP_KERNEL) return model_check_kernel_step(m, i, s, msg);
  if (s->kind == LOOM_STEP_JOB && s->index >= f->job_count)
    return model_bad(m, msg, "step", i, "runs an invalid job index");
  if (s->kind == LOOM_STEP_HOST && s->index >= LOOM_HOSTOP_COUNT)
    return loom_fail(msg, LOOM_E_UNSUPPORTED, "%s: step %u: host op %u is not supported by this runtime",
                     m->name, i, s->index);
  if (s->kind != LOOM_STEP_JOB && s->kind != LOOM_STEP_HOST)
    return model_bad(m, msg, "step", i, "invalid kind");
  for (int k = 0; k < 4; k++)
    if (!tensor_ref_ok(f, s->inputs[k])) return model_bad(m, msg, "step", i, "invalid input tensor");
  for (int k = 0; k < 2; k++)
    if (!tensor_ref_ok(f, s->outputs[k])) return model_bad(m, msg, "step", i, "invalid output tensor");
  if (s->param_offset > f->data_size || s->param_size > f->data_size - s->param_offset)
    return model_bad(m, msg, "step", i, "parameters lie outside the DATA section");
  return LOOM_OK;
}

static loom_status check_model(loom_model *m, char msg[LOOM_MSG_MAX]) {
  loom_status st = check_buffers(m, msg);
  for (uint32_t i = 0; st == LOOM_OK && i < m->file.tensor_count; i++) st = check_tensor(m, i, msg);
  for (uint32_t i = 0; st == LOOM_OK && i < m->file.job_count; i++) st = check_job(m, i, msg);
  for (uint32_t i = 0; st == LOOM_OK && i < m->file.step_count; i++) st = check_step(m, i, msg);
  return st;
}

/* "'tiny' (0xBE827F10)" or "unknown (0x12345678)". */
static void config_text(uint32_t hash, char *out, size_t n) {
  const struct loom_hw_config *c = loom_hw_config_by_hash(hash);
  if (c) snprintf(out, n, "'%s' (0x%08X)", c->name, hash);
  else snprintf(out, n, "unknown (0x%08X)", hash);
}

static loom_status check_config(loom_model *m, char msg[LOOM_MSG_MAX]) {
  uint32_t want = m->file.config_hash, have = m->dev->cfg->hash;
  if (want == have) return LOOM_OK;
  char w[64], h[64];
  config_text(want, w, sizeof w);
  config_text(have, h, sizeof h);
  return loom_fail(msg, LOOM_E_CONFIG,
                   "%s: built for hardware config %s, but the %s device implements config %s",
                   m->name, w, m->dev->ops->name, h);
}

/* ---- device resources ---- */

static loom_status alloc_buffer(loom_model *m, size_t bytes, loom_buffer **out,
                                char msg[LOOM_MSG_MAX]) {
  loom_status st = loom_buffer_alloc(m->dev, bytes, out);
  if (st != LOOM_OK) loom_fail(msg, st, "%s: %s", m->name, m->dev->msg);
  return st;
}

static loom_status sync_to(loom_model *m, loom_buffer *b, char msg[LOOM_MSG_MAX]) {
  loom_status st = loom_buffer_sync(b, LOOM_SYNC_TO_DEVICE);
  if (st != LOOM_OK) loom_fail(msg, st, "%s: %s", m->name, m->dev->msg);
  return st;
}

static loom_status load_buffers(loom_model *m, char msg[LOOM_MSG_MAX]) {
  const struct loom_file *f = &m->file;
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    const struct loom_file_buffer *fb = &f->buffers[i];
    loom_status st = alloc_buffer(m, (size_t)fb->size, &m->bufs[i], msg);
    if (st != LOOM_OK) return st;
    void *p = loom_buffer_map(m->bufs[i]);
    if (fb->kind == LOOM_BUFKIND_CONST) memcpy(p, f->data + fb->data_offset, (size_t)fb->size);
    else memset(p, 0, (size_t)fb->size);
    st = sync_to(m, m->bufs[i], msg);
    if (st != LOOM_OK) return st;
  }
  return LOOM_OK;
}

static loom_status load_jobs(loom_model *m, char msg[LOOM_MSG_MAX]) {
  const struct loom_file *f = &m->file;
  for (uint32_t i = 0; i < f->job_count; i++) {
    const struct loom_file_job *j = &f->jobs[i];
    size_t bytes = (size_t)j->insn_count * LOOM_INSN_BYTES;
    loom_status st = alloc_buffer(m, bytes, &m->insns[i], msg);
    if (st != LOOM_OK) return st;
    memcpy(loom_buffer_map(m->insns[i]), f->insns + (size_t)j->insn_first * LOOM_INSN_BYTES,
           bytes);
    st = sync_to(m, m->insns[i], msg);
    if (st != LOOM_OK) return st;
  }
  return LOOM_OK;
}

static void describe(const struct loom_file *f, uint32_t index, struct model_tensor *mt) {
  const struct loom_file_tensor *t = &f->tensors[index];
  mt->index = index;
  mt->info.name = loom_file_string(f, t->name);
  mt->info.dtype = (loom_dtype)(t->user_dtype ? t->user_dtype : t->dtype);
  mt->info.rank = (int)t->rank;
  memcpy(mt->info.dims, t->dims, sizeof mt->info.dims);
  mt->info.scale = t->scale;
  mt->info.zero_point = t->zero_point;
}

static void list_tensors(loom_model *m) {
  const struct loom_file *f = &m->file;
  for (uint32_t i = 0; i < f->tensor_count; i++) {
    if (f->tensors[i].role == LOOM_ROLE_INPUT) describe(f, i, &m->in[m->n_in++]);
    if (f->tensors[i].role == LOOM_ROLE_OUTPUT) describe(f, i, &m->out[m->n_out++]);
  }
}

static loom_status alloc_tables(loom_model *m, char msg[LOOM_MSG_MAX]) {
  const struct loom_file *f = &m->file;
  m->bufs = calloc(f->buffer_count + 1, sizeof *m->bufs);
  m->insns = calloc(f->job_count + 1, sizeof *m->insns);
  m->results = calloc(f->job_count + 1, sizeof *m->results);
  m->in = calloc(f->tensor_count + 1, sizeof *m->in);
  m->out = calloc(f->tensor_count + 1, sizeof *m->out);
  m->info = calloc(f->job_count + 1, sizeof *m->info);
  m->job_names = calloc(f->job_count + 1, sizeof *m->job_names);
  m->steps = calloc(f->step_count + 1, sizeof *m->steps);
  m->traces = calloc(f->job_count + 1, sizeof *m->traces);
  m->dims = calloc(f->tensor_count + 1, sizeof *m->dims);
  if (!m->bufs || !m->insns || !m->results || !m->in || !m->out || !m->info || !m->job_names ||
      !m->steps || !m->traces || !m->dims)
    return loom_fail(msg, LOOM_E_NOMEM, "%s: out of memory", m->name);
  for (uint32_t i = 0; i < f->tensor_count; i++) memcpy(m->dims[i], f->tensors[i].dims, sizeof m->dims[i]);
  return LOOM_OK;
}

/* loom_job_info and loom_step_info from JOBS, JOBMETA and STEPS. */
static void describe_jobs(loom_model *m) {
  const struct loom_file *f = &m->file;
  for (uint32_t i = 0; i < f->job_count; i++) {
    struct loom_job_info *ji = &m->info[i];
    const struct loom_file_jobmeta *jm = f->jobmeta ? &f->jobmeta[i] : NULL;
    snprintf(m->job_names[i], sizeof m->job_names[i], "job %u", i);
    ji->name = jm ? loom_file_string(f, jm->name) : m->job_names[i];
    ji->op = jm ? loom_file_string(f, jm->op) : "";
    if (jm) ji->macs = jm->macs, ji->est_cycles = jm->est_cycles;
    if (jm) ji->dma_bytes = jm->dma_bytes, ji->min_bytes = jm->min_bytes;
    ji->insn_count = f->jobs[i].insn_count;
    ji->insns = f->insns + (size_t)f->jobs[i].insn_first * LOOM_INSN_BYTES;
    ji->has_meta = jm != NULL;
  }
  for (uint32_t i = 0; i < f->step_count; i++) {
    const struct loom_file_step *s = &f->steps[i];
    m->steps[i].is_job = s->kind == LOOM_STEP_JOB;
    m->steps[i].index = s->index;
    m->steps[i].name = s->kind == LOOM_STEP_JOB      ? m->info[s->index].name
                       : s->kind == LOOM_STEP_KERNEL ? loom_file_string(f, f->kernels[s->index].op)
                                                     : loom_hostop_name(s->index);
  }
}

/* Takes ownership of *f (also on failure). */
static loom_status model_new(loom_device *dev, struct loom_file *f, const char *name,
                             loom_model **out, char msg[LOOM_MSG_MAX]) {
  loom_model *m = calloc(1, sizeof *m);
  if (!m) {
    loom_file_free(f);
    return loom_fail(msg, LOOM_E_NOMEM, "%s: out of memory", name);
  }
  m->dev = dev;
  m->file = *f;
  snprintf(m->name, sizeof m->name, "%s", name);
  loom_status st = check_config(m, msg);
  if (st == LOOM_OK) st = check_model(m, msg);
  if (st == LOOM_OK) st = loom_hostcode_open(&m->file, m->name, dev->trust_native, &m->hostcode, msg);
  if (st == LOOM_OK) st = alloc_tables(m, msg);
  if (st == LOOM_OK) st = load_buffers(m, msg);
  if (st == LOOM_OK) st = load_jobs(m, msg);
  if (st != LOOM_OK) {
    loom_model_free(m);
    return st;
  }
  list_tensors(m);
  describe_jobs(m);
  *out = m;
  return LOOM_OK;
}

loom_status loom_model_load(loom_device *dev, const char *path, loom_model **out,
                            char msg[LOOM_MSG_MAX]) {
  struct loom_file f;
  if (out) *out = NULL;
  if (!dev || !path || !out) return loom_fail(msg, LOOM_E_INVALID, "loom_model_load: NULL argument");
  loom_status st = loom_file_read(path, &f, msg);
  if (st != LOOM_OK) return st;
  return model_new(dev, &f, path, out, msg);
}

loom_status loom_model_load_memory(loom_device *dev, const void *bytes, size_t size,
                                   const char *name, loom_model **out, char msg[LOOM_MSG_MAX]) {
  struct loom_file f;
  if (out) *out = NULL;
  if (!name) name = "<memory>";
  if (!dev || !bytes || !out)
    return loom_fail(msg, LOOM_E_INVALID, "loom_model_load_memory: NULL argument");
  loom_status st = loom_file_parse(bytes, size, name, &f, msg);
  if (st != LOOM_OK) return st;
  return model_new(dev, &f, name, out, msg);
}

void loom_model_free(loom_model *m) {
  if (!m) return;
  for (uint32_t i = 0; m->bufs && i < m->file.buffer_count; i++) loom_buffer_free(m->bufs[i]);
  for (uint32_t i = 0; m->insns && i < m->file.job_count; i++) loom_buffer_free(m->insns[i]);
  free(m->bufs);
  free(m->insns);
  free(m->results);
  free(m->in);
  free(m->out);
  for (uint32_t i = 0; m->traces && i < m->file.job_count; i++) free(m->traces[i].ev);
  free(m->traces);
  free(m->info);
  free(m->job_names);
  free(m->steps);
  free(m->dims);
  free(m->weight_before);
  loom_hostcode_close(m->hostcode); /* before the file its image came from */
  loom_file_free(&m->file);
  free(m);
}

loom_native_state loom_model_native(const loom_model *m, const char **text) {
  if (text) *text = m && m->hostcode ? loom_hostcode_describe(m->hostcode) : "no native code";
  return m ? loom_hostcode_state(m->hostcode) : LOOM_NATIVE_NONE;
}

/* ---- tensors ---- */

int loom_model_input_count(const loom_model *m) { return m ? m->n_in : 0; }
int loom_model_output_count(const loom_model *m) { return m ? m->n_out : 0; }

const struct loom_tensor_info *loom_model_input(const loom_model *m, int i) {
  return m && i >= 0 && i < m->n_in ? &m->in[i].info : NULL;
}

const struct loom_tensor_info *loom_model_output(const loom_model *m, int i) {
  return m && i >= 0 && i < m->n_out ? &m->out[i].info : NULL;
}

static struct model_tensor *find(struct model_tensor *list, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(list[i].info.name, name)) return &list[i];
  return NULL;
}

/* "A, B" for messages. */
static void names_of(const struct model_tensor *list, int n, char *out, size_t size) {
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < n && len < size; i++)
    len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ", " : "", list[i].info.name);
  if (!n) snprintf(out, size, "none");
}

static loom_status not_found(loom_model *m, const char *kind, struct model_tensor *list, int n,
                             const char *name) {
  char names[256];
  names_of(list, n, names, sizeof names);
  return loom_fail(m->dev->msg, LOOM_E_NOTFOUND, "no %s named '%s' (%ss: %s)", kind, name, kind,
                   names);
}

/* "[64, 64]" */
static void shape_text(int rank, const int64_t *dims, char *out, size_t size) {
  size_t len = (size_t)snprintf(out, size, "[");
  for (int i = 0; i < rank && len < size; i++)
    len += (size_t)snprintf(out + len, size - len, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (len < size) snprintf(out + len, size - len, "]");
}

static loom_status check_user_shape(loom_model *m, const struct model_tensor *mt, int rank,
                                    const int64_t *dims) {
  if (rank == mt->info.rank && (rank == 0 || (dims && !memcmp(dims, mt->info.dims,
                                                                (size_t)rank * sizeof *dims))))
    return LOOM_OK;
  char want[128], got[128];
  shape_text(mt->info.rank, mt->info.dims, want, sizeof want);
  shape_text(rank >= 0 && rank <= LOOM_MAX_RANK && dims ? rank : 0, dims, got, sizeof got);
  if (rank < 0 || rank > LOOM_MAX_RANK) snprintf(got, sizeof got, "of rank %d", rank);
  return loom_fail(m->dev->msg, LOOM_E_INVALID, "input '%s': expects shape %s, got %s",
                   mt->info.name, want, got);
}

void *model_tensor_data(loom_model *m, const struct loom_file_tensor *t) {
  return (uint8_t *)loom_buffer_map(m->bufs[t->buffer]) + t->offset;
}

loom_status loom_model_set_input(loom_model *m, const char *name, loom_dtype dtype, int rank,
                                 const int64_t *dims, const void *data) {
  if (!m) return LOOM_E_INVALID;
  if (!name) return loom_fail(m->dev->msg, LOOM_E_INVALID, "set_input: NULL argument");
  struct model_tensor *mt = find(m->in, m->n_in, name);
  if (!mt) return not_found(m, "input", m->in, m->n_in, name);
  const struct loom_file_tensor *t = &m->file.tensors[mt->index];
  if (!data && !loom_file_tensor_empty(t)) return loom_fail(m->dev->msg, LOOM_E_INVALID, "set_input: NULL argument");
  if (dtype != mt->info.dtype && dtype != (loom_dtype)t->dtype && !(t->dtype == LOOM_DT_BF16 && dtype == LOOM_DT_U16))
    return loom_fail(m->dev->msg, LOOM_E_INVALID, "input '%s': expects %s, got %s", name,
                     loom_dtype_name(mt->info.dtype), loom_dtype_name(dtype));
  loom_status st = check_user_shape(m, mt, rank, dims);
  if (st != LOOM_OK) return st;
  char why[LOOM_MSG_MAX];
  st = loom_tensor_write(t, model_tensor_data(m, t), dtype, data, why);
  if (st != LOOM_OK) return loom_fail(m->dev->msg, st, "input '%s': %s", name, why);
  st = loom_buffer_sync(m->bufs[t->buffer], LOOM_SYNC_TO_DEVICE);
  if (st == LOOM_OK) mt->set = 1;
  return st;
}

loom_status loom_model_get_output(loom_model *m, const char *name, void *data, size_t bytes) {
  if (!m) return LOOM_E_INVALID;
  if (!name || !data) return loom_fail(m->dev->msg, LOOM_E_INVALID, "get_output: NULL argument");
  struct model_tensor *mt = find(m->out, m->n_out, name);
  if (!mt) return not_found(m, "output", m->out, m->n_out, name);
  struct loom_file_tensor cur = m->file.tensors[mt->index]; /* with its current dims */
  const struct loom_file_tensor *t = &cur;
  memcpy(cur.dims, m->dims[mt->index], sizeof cur.dims);
  uint64_t want = loom_tensor_elems(t) * loom_dtype_size(mt->info.dtype);
  if (bytes != want)
    return loom_fail(m->dev->msg, LOOM_E_INVALID, "output '%s' is %llu bytes of %s, not %zu",
                     name, (unsigned long long)want, loom_dtype_name(mt->info.dtype), bytes);
  char why[LOOM_MSG_MAX];
  loom_status st = loom_tensor_read(t, model_tensor_data(m, t), mt->info.dtype, data, why);
  if (st != LOOM_OK) return loom_fail(m->dev->msg, st, "output '%s': %s", name, why);
  return LOOM_OK;
}

/* ---- running ---- */

/* Prefixes the device's message with "step N (...): ". */
static loom_status step_failed(loom_model *m, loom_status st, uint32_t i, const char *what,
                               const char *why) {
  char copy[LOOM_MSG_MAX];
  snprintf(copy, sizeof copy, "%s", why);
  return loom_fail(m->dev->msg, st, "step %u (%s): %s", i, what, copy);
}

static void accumulate(struct loom_job_result *sum, const struct loom_job_result *r) {
  for (int c = 0; c < LOOM_CNT_COUNT; c++) sum->counters[c] += r->counters[c];
  sum->error = r->error;
  sum->error_insn = r->error_insn;
  memcpy(sum->message, r->message, sizeof sum->message);
}

/* Copies the device's timeline of the job that just ran. */
static loom_status keep_trace(loom_model *m, uint32_t job) {
  size_t n;
  const struct loom_trace_event *ev = loom_device_trace(m->dev, &n);
  struct model_trace *t = &m->traces[job];
  free(t->ev);
  t->ev = NULL, t->n = 0;
  if (!n) return LOOM_OK;
  if (!(t->ev = malloc(n * sizeof *ev)))
    return loom_fail(m->dev->msg, LOOM_E_NOMEM, "out of memory keeping a timeline of %zu slices", n);
  memcpy(t->ev, ev, n * sizeof *ev);
  t->n = n;
  return LOOM_OK;
}

static loom_status run_job(loom_model *m, uint32_t i, uint32_t job, uint32_t timeout_ms) {
  const struct loom_file_job *fj = &m->file.jobs[job];
  struct loom_job j = {.insns = m->insns[job], .insn_count = fj->insn_count};
  struct loom_job_result r;
  for (int s = 0; s < LOOM_NUM_SEGMENTS; s++)
    j.segments[s] = fj->segments[s] == LOOM_FILE_NO_BUFFER ? NULL : m->bufs[fj->segments[s]];
  loom_status st = loom_job_run(m->dev, &j, timeout_ms, &r);
  accumulate(&m->results[job], &r);
  if (m->tracing && st == LOOM_OK) st = keep_trace(m, job);
  for (int s = 0; s < LOOM_NUM_SEGMENTS && st == LOOM_OK; s++)
    if (j.segments[s]) st = loom_buffer_sync(j.segments[s], LOOM_SYNC_FROM_DEVICE);
  if (st == LOOM_OK) return LOOM_OK;
  char what[32];
  snprintf(what, sizeof what, "job %u", job);
  return step_failed(m, st, i, what, m->dev->msg);
}

static void host_args(loom_model *m, const struct loom_file_step *s, struct loom_hostop_args *a) {
  memset(a, 0, sizeof *a);
  for (int k = 0; k < 4; k++) {
    if (s->inputs[k] == LOOM_FILE_NO_BUFFER) continue;
    const struct loom_file_tensor *t = &m->file.tensors[s->inputs[k]];
    a->in[a->n_in++] = (struct loom_hostop_tensor){t, model_tensor_data(m, t)};
  }
  for (int k = 0; k < 2; k++) {
    if (s->outputs[k] == LOOM_FILE_NO_BUFFER) continue;
    const struct loom_file_tensor *t = &m->file.tensors[s->outputs[k]];
    a->out[a->n_out++] = (struct loom_hostop_tensor){t, model_tensor_data(m, t)};
  }
  a->params = s->param_size ? m->file.data + s->param_offset : NULL;
  a->param_size = s->param_size;
}

static loom_status run_host(loom_model *m, uint32_t i, const struct loom_file_step *s) {
  struct loom_hostop_args a;
  char why[LOOM_MSG_MAX] = "";
  char what[48];
  snprintf(what, sizeof what, "host op %s", loom_hostop_name(s->index));
  host_args(m, s, &a);
  /* Native code when the file has some for this step and this machine;
   * loom_hostcode_open already refused code for this machine that fails. */
  loom_hostcode_fn fn = loom_hostcode_entry(m->hostcode, i);
  loom_status st = fn ? loom_hostcode_call(fn, &a, why) : loom_hostop_run(s->index, &a, why);
  if (st != LOOM_OK) return step_failed(m, st, i, what, why);
  for (int k = 0; k < 2 && st == LOOM_OK; k++)
    if (s->outputs[k] != LOOM_FILE_NO_BUFFER)
      st = loom_buffer_sync(m->bufs[m->file.tensors[s->outputs[k]].buffer], LOOM_SYNC_TO_DEVICE);
  if (st != LOOM_OK) return step_failed(m, st, i, what, m->dev->msg);
  return LOOM_OK;
}

/* ---- progress ---- */

/* A job weighs what the compiler expects it to take (JOBMETA est_cycles),
 * a host step 1; without JOBMETA every step weighs 1. */
static double step_weight(const loom_model *m, uint32_t i) {
  const struct loom_file_step *s = &m->file.steps[i];
  if (s->kind != LOOM_STEP_JOB || !m->file.jobmeta) return 1;
  uint64_t c = m->file.jobmeta[s->index].est_cycles;
  return c ? (double)c : 1;
}

void loom_model_set_progress(loom_model *m, loom_run_progress_fn fn, void *ctx) {
  if (!m) return;
  uint32_t n = m->file.step_count;
  if (fn && !m->weight_before && !(m->weight_before = calloc((size_t)n + 1, sizeof *m->weight_before))) fn = NULL;
  for (uint32_t i = 0; fn && i < n; i++) m->weight_before[i + 1] = m->weight_before[i] + step_weight(m, i);
  m->progress = fn, m->progress_ctx = ctx;
}

static void report(loom_model *m, double within) {
  double total = m->weight_before[m->file.step_count], before = m->weight_before[m->now.step];
  double w = m->now.step < (int)m->file.step_count ? m->weight_before[m->now.step + 1] - before : 0;
  m->now.fraction = total > 0 ? (before + w * within) / total : 1;
  m->progress(m->progress_ctx, &m->now);
}

/* The backend's hook: `done` units of the running job. */
static void job_progress(void *ctx, uint64_t done) {
  loom_model *m = ctx;
  double within = m->step_units > 0 ? (double)done / m->step_units : 0;
  report(m, within < 0.99 ? within : 0.99);
}

static void step_starts(loom_model *m, uint32_t i) {
  const struct loom_file_step *s = &m->file.steps[i];
  if (!m->progress) return;
  m->now = (struct loom_run_progress){(int)i, (int)m->file.step_count, m->steps[i].name, 0};
  m->step_units = s->kind == LOOM_STEP_JOB && m->file.jobmeta ? (double)m->file.jobmeta[s->index].est_cycles : 0;
  report(m, 0);
}

static loom_status model_run(loom_model *m, uint32_t timeout_ms) {
  for (int i = 0; i < m->n_in; i++)
    if (!m->in[i].set)
      return loom_fail(m->dev->msg, LOOM_E_INVALID, "input '%s' was not set", m->in[i].info.name);
  memset(m->results, 0, m->file.job_count * sizeof *m->results);
  for (uint32_t i = 0; i < m->file.step_count; i++) m->steps[i].seconds = 0;
  for (uint32_t i = 0; i < m->file.tensor_count; i++) memcpy(m->dims[i], m->file.tensors[i].dims, sizeof m->dims[i]);
  for (uint32_t i = 0; i < m->file.step_count; i++) {
    const struct loom_file_step *s = &m->file.steps[i];
    struct timespec t0, t1;
    step_starts(m, i);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    loom_status st = s->kind == LOOM_STEP_JOB      ? run_job(m, i, s->index, timeout_ms)
                     : s->kind == LOOM_STEP_KERNEL ? model_run_kernel(m, i, s)
                                                   : run_host(m, i, s);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    m->steps[i].seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (st != LOOM_OK) return st;
  }
  return LOOM_OK;
}

loom_status loom_model_run(loom_model *m, uint32_t timeout_ms) {
  if (!m) return LOOM_E_INVALID;
  if (m->progress) loom_device_set_progress(m->dev, job_progress, m);
  loom_status st = model_run(m, timeout_ms);
  if (!m->progress) return st;
  loom_device_set_progress(m->dev, NULL, NULL);
  m->now.step = (int)m->file.step_count, m->now.name = "";
  if (st == LOOM_OK) report(m, 0); /* 100% */
  return st;
}

int loom_model_job_count(const loom_model *m) { return m ? (int)m->file.job_count : 0; }

const struct loom_job_result *loom_model_job_result(const loom_model *m, int job) {
  return m && job >= 0 && (uint32_t)job < m->file.job_count ? &m->results[job] : NULL;
}

/* ---- profiles ---- */

const struct loom_job_info *loom_model_job_info(const loom_model *m, int job) {
  return m && job >= 0 && (uint32_t)job < m->file.job_count ? &m->info[job] : NULL;
}

int loom_model_step_count(const loom_model *m) { return m ? (int)m->file.step_count : 0; }

const struct loom_step_info *loom_model_step(const loom_model *m, int step) {
  return m && step >= 0 && (uint32_t)step < m->file.step_count ? &m->steps[step] : NULL;
}

loom_status loom_model_set_trace(loom_model *m, int on) {
  if (!m) return LOOM_E_INVALID;
  loom_status st = loom_device_set_trace(m->dev, on);
  if (st == LOOM_OK) m->tracing = on != 0;
  return st;
}

const struct loom_trace_event *loom_model_job_trace(const loom_model *m, int job, size_t *count) {
  *count = 0;
  if (!m || job < 0 || (uint32_t)job >= m->file.job_count || !m->traces[job].n) return NULL;
  *count = m->traces[job].n;
  return m->traces[job].ev;
}
