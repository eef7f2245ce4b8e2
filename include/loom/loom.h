/*
 * loom.h - the Loom runtime library (libloom), public API.
 *
 * A device is opened by backend name ("fsim", "tsim", "linux", "xrt").  It
 * hands out DMA buffers, runs jobs (an instruction stream plus a segment
 * table of buffers) and reports counters.  On top of that, a model loaded
 * from a .loom file runs with named input and output tensors.
 *
 * Every call returns a loom_status; on failure the device (or, for
 * loom_device_open and loom_model_load, the caller's message buffer) holds a
 * message naming what was wrong.  The library never aborts on user input.
 */
#ifndef LOOM_LOOM_H
#define LOOM_LOOM_H

#include <stddef.h>
#include <stdint.h>

#include "loom/hwconfig.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum loom_status {
  LOOM_OK = 0,
  LOOM_E_INVALID,     /* bad argument */
  LOOM_E_NOMEM,       /* out of host or device memory */
  LOOM_E_IO,          /* file or device I/O failed */
  LOOM_E_FORMAT,      /* malformed .loom or .npy file */
  LOOM_E_CONFIG,      /* binary built for another hardware configuration */
  LOOM_E_JOB,         /* the accelerator stopped the job with an error code */
  LOOM_E_TIMEOUT,     /* the job did not finish in time; the device was reset */
  LOOM_E_UNSUPPORTED, /* backend or feature not available here */
  LOOM_E_NOTFOUND,    /* no such backend, device, tensor or file */
  LOOM_STATUS_COUNT
} loom_status;

const char *loom_status_name(loom_status s);

/* The library's version, "MAJOR.MINOR.PATCH" (the top-level VERSION file;
 * the shared library's soname is libloom.so.MAJOR). */
const char *loom_version(void);

/* Entries of loom_job_result.counters (LOOM_CNT_COUNT of the library): for
 * bindings that read results without this header. */
uint32_t loom_counter_count(void);

typedef enum loom_dtype {
  LOOM_DT_INVALID = 0,
  LOOM_DT_I8,
  LOOM_DT_U8,
  LOOM_DT_I32,
  LOOM_DT_F32,
  /* Host-side types (host steps, graph inputs and outputs); the
   * accelerator computes in the four above. */
  LOOM_DT_I64,
  LOOM_DT_BOOL,   /* one byte, 0 or 1 */
  LOOM_DT_I16,
  LOOM_DT_U16,
  LOOM_DT_U32,
  LOOM_DT_U64,
  LOOM_DT_F16,    /* IEEE binary16 */
  LOOM_DT_BF16,   /* bfloat16: the high half of a binary32 */
  LOOM_DT_F64,
  LOOM_DT_COUNT
} loom_dtype;

const char *loom_dtype_name(loom_dtype t);
size_t loom_dtype_size(loom_dtype t);

#define LOOM_MAX_RANK 6
#define LOOM_MSG_MAX 512

typedef struct loom_device loom_device;
/* The buffer's struct tag differs from its typedef name because C shares one
 * tag namespace between structs and enums, and `enum loom_buffer` (the ISA's
 * on-chip buffers) comes from loom_isa_gen.h. */
typedef struct loom_dma_buffer loom_buffer;
typedef struct loom_model loom_model;

/* ---- devices ---- */

/* Opens `backend` ("fsim", "tsim", ...).  `options` is a backend-specific
 * "key=value,key=value" string or NULL (e.g. "config=tiny" for fsim/tsim,
 * "dev=/dev/loom0" for linux).  One option is every backend's:
 * trust_native=1 runs the native host code of every model loaded on the
 * device, signed with the user's key or not (docs/hostcode.md; the CLI's
 * --trust-native).  On failure *out is NULL and `msg` says why. */
loom_status loom_device_open(const char *backend, const char *options, loom_device **out,
                             char msg[LOOM_MSG_MAX]);
void loom_device_close(loom_device *dev);

/* The message of the last failed call on `dev`. */
const char *loom_device_error(const loom_device *dev);

/* The hardware configuration the device implements. */
const struct loom_hw_config *loom_device_config(const loom_device *dev);
const char *loom_device_backend(const loom_device *dev);

/* Names of the compiled-in backends, NULL-terminated. */
const char *const *loom_backend_names(void);

/* ---- DMA buffers ---- */

loom_status loom_buffer_alloc(loom_device *dev, size_t bytes, loom_buffer **out);
void loom_buffer_free(loom_buffer *buf);
void *loom_buffer_map(loom_buffer *buf);
size_t loom_buffer_size(const loom_buffer *buf);

typedef enum loom_sync_dir { LOOM_SYNC_TO_DEVICE, LOOM_SYNC_FROM_DEVICE } loom_sync_dir;
loom_status loom_buffer_sync(loom_buffer *buf, loom_sync_dir dir);

/* ---- jobs ---- */

struct loom_job {
  loom_buffer *insns;          /* instruction stream, 16 bytes each */
  uint32_t insn_count;
  loom_buffer *segments[8];    /* segment table; NULL = unmapped */
};

struct loom_job_result {
  uint32_t error;              /* enum loom_error of the ISA */
  uint32_t error_insn;         /* index of the failing instruction */
  uint64_t counters[LOOM_CNT_COUNT];
  char message[LOOM_MSG_MAX];  /* detail from the backend, "" if none */
};

/* Submits one job; at most one is in flight per device. */
loom_status loom_job_submit(loom_device *dev, const struct loom_job *job);

/* Waits up to timeout_ms (0 = the backend's default).  LOOM_E_JOB when the
 * accelerator reported an error (res->error says which), LOOM_E_TIMEOUT
 * after which the device has been reset and accepts the next job. */
loom_status loom_job_wait(loom_device *dev, uint32_t timeout_ms, struct loom_job_result *res);

/* Submit and wait. */
loom_status loom_job_run(loom_device *dev, const struct loom_job *job, uint32_t timeout_ms,
                         struct loom_job_result *res);

/* ---- timelines (loom run --trace, --profile) ---- */

/* The accelerator's modules, one trace track each. */
enum loom_module { LOOM_MOD_FETCH, LOOM_MOD_LOAD, LOOM_MOD_COMPUTE, LOOM_MOD_STORE, LOOM_MOD_COUNT };

enum loom_trace_kind {
  LOOM_TRACE_INSN,       /* the module executed instruction `insn` */
  LOOM_TRACE_TOKEN_WAIT, /* the module held `insn` waiting for a dependency token */
  LOOM_TRACE_MEM_WAIT,   /* the module held `insn` waiting for DRAM */
  LOOM_TRACE_KIND_COUNT
};

/* One slice of a job's timeline.  Times are cycles since the job started
 * (exact on tsim, the timing model's estimate on fsim with timing=1). */
struct loom_trace_event {
  uint64_t begin, end; /* [begin, end) */
  uint32_t insn;       /* index in the job's instruction stream */
  uint8_t module;      /* enum loom_module */
  uint8_t kind;        /* enum loom_trace_kind */
  uint16_t opcode;     /* LOOM_OP_* of the instruction */
};

/* Records a timeline of every job from now on (on != 0), or stops.
 * LOOM_E_UNSUPPORTED when the backend has no clock to time it by. */
loom_status loom_device_set_trace(loom_device *dev, int on);

/* The timeline of the last finished job, in order of `begin`; owned by the
 * device and valid until the next submit.  *count is 0 when none. */
const struct loom_trace_event *loom_device_trace(const loom_device *dev, size_t *count);

/* ---- models (.loom files) ---- */

struct loom_tensor_info {
  const char *name;
  loom_dtype dtype;            /* the type the user reads or writes */
  int rank;
  int64_t dims[LOOM_MAX_RANK];
  float scale;                 /* quantization of the stored tensor, 0 if none */
  int32_t zero_point;
};

loom_status loom_model_load(loom_device *dev, const char *path, loom_model **out,
                            char msg[LOOM_MSG_MAX]);
loom_status loom_model_load_memory(loom_device *dev, const void *bytes, size_t size,
                                   const char *name, loom_model **out, char msg[LOOM_MSG_MAX]);
void loom_model_free(loom_model *m);

/* What a loaded model does with the native host code its file carries
 * (section HOSTCODE, docs/hostcode.md). */
typedef enum loom_native_state {
  LOOM_NATIVE_NONE = 0,      /* the file has none */
  LOOM_NATIVE_RUNS,          /* it runs: signed with the user's key, or trusted (trust_native=1) */
  LOOM_NATIVE_OTHER_MACHINE, /* built for another machine: the portable host ops run */
  LOOM_NATIVE_UNTRUSTED,     /* for this machine, but not consented to: the portable host ops run */
  LOOM_NATIVE_STATE_COUNT
} loom_native_state;

/* The state and, when `text` is not NULL, one line saying it ("its native
 * code for x86_64-unknown-linux-gnu is not signed: the portable host ops
 * run (--trust-native runs it)"); the library prints nothing itself. */
loom_native_state loom_model_native(const loom_model *m, const char **text);

int loom_model_input_count(const loom_model *m);
int loom_model_output_count(const loom_model *m);
const struct loom_tensor_info *loom_model_input(const loom_model *m, int i);
const struct loom_tensor_info *loom_model_output(const loom_model *m, int i);

/* Sets an input from user data of `dtype` (the declared type, or f32 for a
 * quantized int8 input, which is then quantized).  dims must match. */
loom_status loom_model_set_input(loom_model *m, const char *name, loom_dtype dtype, int rank,
                                 const int64_t *dims, const void *data);

/* Runs every step (accelerator jobs and host ops) of the model. */
loom_status loom_model_run(loom_model *m, uint32_t timeout_ms);

/* Progress of loom_model_run, for a display (the library prints nothing). */
struct loom_run_progress {
  int step, steps;   /* the step running (0-based), of how many */
  const char *name;  /* its layer (the job's JOBMETA name) or host op */
  double fraction;   /* of the whole run, 0..1: steps weighed by the compiler's
                        cycle estimates (JOBMETA; equal weights without), and
                        within a job by the backend's progress (fsim, tsim) */
};
typedef void (*loom_run_progress_fn)(void *ctx, const struct loom_run_progress *p);

/* Calls fn(ctx, ...) as each step of loom_model_run starts and, on the
 * backends that report it (fsim, tsim), every few milliseconds of a long
 * job.  fn NULL stops. */
void loom_model_set_progress(loom_model *m, loom_run_progress_fn fn, void *ctx);

/* Copies an output in its declared type into `data` (`bytes` long). */
loom_status loom_model_get_output(loom_model *m, const char *name, void *data, size_t bytes);

/* Counters summed over the jobs of the last run, and per job. */
int loom_model_job_count(const loom_model *m);
const struct loom_job_result *loom_model_job_result(const loom_model *m, int job);

/* ---- profiles (loom run --profile, --trace; docs/profiling.md) ---- */

/* What the compiler recorded about a job (the file's JOBMETA, format 1.2).
 * has_meta is 0 for an older file: then name is "job N", op "" and the
 * figures 0. */
struct loom_job_info {
  const char *name, *op;
  uint64_t macs;                 /* useful multiply-accumulates */
  uint64_t est_cycles;           /* the compiler's estimate */
  uint64_t dma_bytes;            /* DRAM bytes the compiler expects */
  uint64_t min_bytes;            /* compulsory DRAM traffic */
  uint32_t insn_count;
  const uint8_t *insns;          /* the job's stream, insn_count x 16 bytes */
  int has_meta;
};
const struct loom_job_info *loom_model_job_info(const loom_model *m, int job);

/* The program's steps and how long each took in the last run (wall clock
 * of the host, including the simulation time of a job on a simulator). */
struct loom_step_info {
  int is_job;                    /* 1: job `index`; 0: host op `index` */
  uint32_t index;
  const char *name;              /* the job's layer name, or the host op's name */
  double seconds;
};
int loom_model_step_count(const loom_model *m);
const struct loom_step_info *loom_model_step(const loom_model *m, int step);

/* Records the timeline of every job of the following runs (loom_device_set_trace),
 * or stops.  LOOM_E_UNSUPPORTED, with the device's message, on a backend
 * without a clock. */
loom_status loom_model_set_trace(loom_model *m, int on);

/* The timeline of job `job` in the last run (the last time it ran), owned by
 * the model; NULL with *count 0 when none was recorded. */
const struct loom_trace_event *loom_model_job_trace(const loom_model *m, int job, size_t *count);

#ifdef __cplusplus
}
#endif
#endif
