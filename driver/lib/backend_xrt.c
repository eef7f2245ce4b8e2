/*
 * backend_xrt.c - the "xrt" backend: jobs run on a Loom RTL kernel in an
 * xclbin, through the Xilinx Runtime's C API (Alveo cards, Kria and other
 * XRT embedded platforms; docs/xrt.md).
 *
 * XRT owns the ap_ctrl_hs block (CTRL, GIE, IER, ISR): a job is an XRT run
 * whose arguments are the accelerator's registers from 0x10 on, in the
 * order of the register map, so XRT writes exactly what hwregs.c writes on
 * a board:
 *
 *   arg 0      insn        global (m_axi_gmem)  0x10  instruction stream
 *   arg 1      insn_count  scalar uint          0x18
 *   arg 2+2s   seg<s>_base global (m_axi_gmem)  0x20 + 0x10*s
 *   arg 3+2s   seg<s>_size scalar ulong         0x28 + 0x10*s   (0 = unmapped)
 *
 * Global arguments take buffer objects; XRT writes their device address.
 * An unmapped segment gets the instruction buffer with size 0 (the base of
 * a segment of size 0 is ignored).  Everything else goes through hwregs.c
 * over xrtKernelReadRegister/WriteRegister, which is why the kernel is
 * opened exclusively: probing ID, VERSION and CONFIG_HASH at open, reading
 * ERR_STATUS, ERR_INSN and the counters after a run, and SOFT_RESET after
 * a timeout.  Writes below 0x10 are dropped by the transport: those
 * registers are XRT's.
 *
 * XRT is loaded with dlopen() at open(), like tsim's library, so that one
 * libloom runs on machines with and without XRT.  The function types come
 * from XRT's own headers at build time (LOOM_HAVE_XRT, set by
 * driver/xrt/module.mk when it finds them); without them this file builds
 * a backend that explains how to get one.
 *
 * XRT 2.13 terminates the process (an uncaught C++ exception) when
 * XILINX_XRT is unset or lacks lib/libxrt_core.so.2, and prints to stdout
 * when it finds no device, so open() checks both before it even loads XRT:
 * no XRT kernel driver (xocl or zocl) or no usable XILINX_XRT is a clean
 * "not available" with the reason.  Emulation (XCL_EMULATION_MODE) skips
 * the driver check.
 *
 * Options: xclbin=PATH (load it; else use the xclbin already on the
 * device), device=INDEX (default 0), kernel=NAME (default "loom", from
 * bitstreams/boards.def), lib=PATH (libxrt_coreutil.so.2), config=NAME|FILE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwregs.h"
#include "runtime.h"

static const char *const xrt_option_keys[] = {"xclbin", "device", "kernel", "lib", "config", NULL};

#ifndef LOOM_HAVE_XRT

static loom_status xrt_open(const char *options, void **state,
                            const struct loom_hw_config **cfg, char msg[LOOM_MSG_MAX]) {
  loom_status st = loom_option_check(options, xrt_option_keys, "xrt", msg);
  if (st != LOOM_OK) return st;
  return loom_fail(msg, LOOM_E_UNSUPPORTED,
                   "xrt: this libloom was built without XRT (no XRT headers were found: "
                   "install libxrt-dev or set XILINX_XRT, then rebuild; docs/xrt.md)");
}

static void xrt_close(void *state) {}

static loom_status xrt_alloc(void *state, size_t bytes, struct loom_backend_buffer *buf,
                             char msg[LOOM_MSG_MAX]) {
  return loom_fail(msg, LOOM_E_UNSUPPORTED, "xrt: not built");
}

static void xrt_free(void *state, struct loom_backend_buffer *buf) {}

static loom_status xrt_submit(void *state, const struct loom_backend_buffer *insns,
                              uint32_t insn_count,
                              const struct loom_backend_buffer *const segments[8],
                              char msg[LOOM_MSG_MAX]) {
  return loom_fail(msg, LOOM_E_UNSUPPORTED, "xrt: not built");
}

static loom_status xrt_wait(void *state, uint32_t timeout_ms, struct loom_job_result *res,
                            char msg[LOOM_MSG_MAX]) {
  return loom_fail(msg, LOOM_E_UNSUPPORTED, "xrt: not built");
}

#define xrt_sync NULL
#define xrt_reset NULL

#else /* LOOM_HAVE_XRT */

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

#include "driver/xrt/xrt_api.h"

#define XRT_DEFAULT_KERNEL "loom"
#define XRT_DEFAULT_TIMEOUT_MS 10000u
#define XRT_BO_ALIGN 4096u
#define XRT_PATH_MAX 1024
#define XRT_FIRST_ARG_REG LOOM_REG_INSN_ADDR_LO /* below: ap_ctrl_hs, XRT's */

/* The XRT functions used (driver/xrt/xrt_api.h), typed by XRT's headers. */
struct xrt_fns {
#define XRT_FIELD(field, sym) __typeof__(sym) *field;
  LOOM_XRT_FUNCTIONS(XRT_FIELD)
#undef XRT_FIELD
};

struct xrt_state {
  void *dl;
  struct xrt_fns f;
  xrtDeviceHandle dev;
  xrtKernelHandle kernel;
  int group;                /* memory bank of the kernel's m_axi port */
  struct loom_reg_io io;
  struct loom_hw_config cfg;
  xrtRunHandle run;         /* the job in flight */
  int stuck;                /* a timed-out run XRT has not retired */
  char where[64];           /* "device 0", for messages */
};

/* ---- register transport: hwregs.c over XRT ---- */

static uint32_t io_read(void *ctx, uint32_t off) {
  struct xrt_state *s = ctx;
  uint32_t v = 0;
  if (s->f.read_reg(s->kernel, off, &v) != 0) return 0xFFFFFFFFu;
  return v;
}

static void io_write(void *ctx, uint32_t off, uint32_t v) {
  struct xrt_state *s = ctx;
  if (off < XRT_FIRST_ARG_REG) return;
  s->f.write_reg(s->kernel, off, v);
}

/* ---- before calling XRT: what would make it abort or print ---- */

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static loom_status check_driver(char msg[LOOM_MSG_MAX]) {
  if (getenv("XCL_EMULATION_MODE")) return LOOM_OK;
  if (is_dir("/sys/bus/pci/drivers/xocl") || is_dir("/sys/bus/platform/drivers/zocl"))
    return LOOM_OK;
  return loom_fail(msg, LOOM_E_NOTFOUND,
                   "xrt: no XRT device here: neither the xocl (PCIe) nor the zocl (embedded) "
                   "kernel driver is loaded");
}

/* The shim library XRT 2.13 loads from $XILINX_XRT/lib, or why not. */
static loom_status check_xilinx_xrt(char msg[LOOM_MSG_MAX]) {
  const char *root = getenv("XILINX_XRT");
  const char *mode = getenv("XCL_EMULATION_MODE");
  const char *shim = !mode ? "libxrt_core.so.2"
                     : !strcmp(mode, "hw_emu") ? "libxrt_hwemu.so.2"
                                               : "libxrt_swemu.so.2";
  char path[XRT_PATH_MAX];
  if (!root || !root[0])
    return loom_fail(msg, LOOM_E_UNSUPPORTED,
                     "xrt: XILINX_XRT is not set (XRT 2.13 aborts without it): source "
                     "/opt/xilinx/xrt/setup.sh, or see docs/xrt.md for Debian's libxrt");
  snprintf(path, sizeof path, "%s/lib/%s", root, shim);
  if (!is_file(path))
    return loom_fail(msg, LOOM_E_UNSUPPORTED,
                     "xrt: XILINX_XRT=%s has no lib/%s (XRT 2.13 aborts without it); see "
                     "docs/xrt.md",
                     root, shim);
  return LOOM_OK;
}

/* ---- loading libxrt_coreutil ---- */

static void *open_library(const char *options, char *tried, size_t n) {
  char path[XRT_PATH_MAX];
  const char *root = getenv("XILINX_XRT");
  if (loom_option_get(options, "lib", path, sizeof path)) {
    snprintf(tried, n, "%s", path);
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  if (root && root[0]) {
    snprintf(path, sizeof path, "%s/lib/libxrt_coreutil.so.2", root);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (dl) return dl;
  }
  snprintf(tried, n, "libxrt_coreutil.so.2");
  return dlopen("libxrt_coreutil.so.2", RTLD_NOW | RTLD_LOCAL);
}

static loom_status load_library(struct xrt_state *s, const char *options,
                                char msg[LOOM_MSG_MAX]) {
  char tried[XRT_PATH_MAX] = "";
  s->dl = open_library(options, tried, sizeof tried);
  if (!s->dl)
    return loom_fail(msg, LOOM_E_UNSUPPORTED,
                     "xrt: the XRT runtime is not installed (cannot load %s: %s)", tried,
                     dlerror());
#define XRT_BIND(field, sym)                                                         \
  *(void **)&s->f.field = dlsym(s->dl, #sym);                                        \
  if (!s->f.field)                                                                   \
    return loom_fail(msg, LOOM_E_UNSUPPORTED, "xrt: %s lacks %s (XRT older than 2.13?)", \
                     tried, #sym);
  LOOM_XRT_FUNCTIONS(XRT_BIND)
#undef XRT_BIND
  return LOOM_OK;
}

/* ---- open / close ---- */

static void xrt_close(void *state) {
  struct xrt_state *s = state;
  if (s->run && !s->stuck) s->f.run_close(s->run);
  if (s->kernel) s->f.kernel_close(s->kernel);
  if (s->dev) s->f.device_close(s->dev);
  if (s->dl) dlclose(s->dl);
  free(s);
}

static loom_status parse_index(const char *options, unsigned *index, char msg[LOOM_MSG_MAX]) {
  char buf[32], *end;
  *index = 0;
  if (!loom_option_get(options, "device", buf, sizeof buf)) return LOOM_OK;
  unsigned long v = strtoul(buf, &end, 10);
  if (!buf[0] || *end || v > 1024)
    return loom_fail(msg, LOOM_E_INVALID, "xrt: option device=%s: expected an index", buf);
  *index = (unsigned)v;
  return LOOM_OK;
}

/* Device, xclbin and the exclusive kernel handle. */
static loom_status open_kernel(struct xrt_state *s, const char *options, unsigned index,
                               char msg[LOOM_MSG_MAX]) {
  char xclbin[XRT_PATH_MAX], kname[128] = XRT_DEFAULT_KERNEL;
  xuid_t uuid;
  s->dev = s->f.device_open(index);
  if (!s->dev) return loom_fail(msg, LOOM_E_NOTFOUND, "xrt: cannot open %s", s->where);
  if (loom_option_get(options, "xclbin", xclbin, sizeof xclbin) &&
      s->f.load_xclbin_file(s->dev, xclbin) != 0)
    return loom_fail(msg, LOOM_E_IO, "xrt: %s: cannot load %s", s->where, xclbin);
  static const xuid_t none;
  memset(uuid, 0, sizeof uuid);
  if (s->f.get_xclbin_uuid(s->dev, uuid) != 0 || !memcmp(uuid, none, sizeof uuid))
    return loom_fail(msg, LOOM_E_INVALID, "xrt: %s has no xclbin loaded; pass xclbin=PATH",
                     s->where);
  loom_option_get(options, "kernel", kname, sizeof kname);
  s->kernel = s->f.kernel_open(s->dev, uuid, kname);
  if (!s->kernel)
    return loom_fail(msg, LOOM_E_NOTFOUND,
                     "xrt: %s: the xclbin has no kernel '%s' free for exclusive use", s->where,
                     kname);
  s->group = s->f.arg_group(s->kernel, 0);
  return LOOM_OK;
}

/* ID, ISA version and configuration of the kernel, as on a board. */
static loom_status probe(struct xrt_state *s, const char *options, char msg[LOOM_MSG_MAX]) {
  uint32_t hash;
  s->io = (struct loom_reg_io){.ctx = s, .read = io_read, .write = io_write};
  loom_status st = loom_hw_probe(&s->io, 0, &hash, msg);
  if (st != LOOM_OK) return st;
  return loom_backend_hw_config("xrt", s->where, hash, options, &s->cfg, msg);
}

static loom_status xrt_open(const char *options, void **state,
                            const struct loom_hw_config **cfg, char msg[LOOM_MSG_MAX]) {
  unsigned index;
  loom_status st = loom_option_check(options, xrt_option_keys, "xrt", msg);
  if (st == LOOM_OK) st = parse_index(options, &index, msg);
  if (st != LOOM_OK) return st;
  struct xrt_state *s = calloc(1, sizeof *s);
  if (!s) return loom_fail(msg, LOOM_E_NOMEM, "xrt: out of memory");
  snprintf(s->where, sizeof s->where, "device %u", index);
  st = check_driver(msg);
  if (st == LOOM_OK) st = check_xilinx_xrt(msg);
  if (st == LOOM_OK) st = load_library(s, options, msg);
  if (st == LOOM_OK) st = open_kernel(s, options, index, msg);
  if (st == LOOM_OK) st = probe(s, options, msg);
  if (st != LOOM_OK) {
    xrt_close(s);
    return st;
  }
  *state = s;
  *cfg = &s->cfg;
  return LOOM_OK;
}

/* ---- buffers ---- */

static loom_status xrt_alloc(void *state, size_t bytes, struct loom_backend_buffer *buf,
                             char msg[LOOM_MSG_MAX]) {
  struct xrt_state *s = state;
  size_t size = (bytes + XRT_BO_ALIGN - 1) & ~(size_t)(XRT_BO_ALIGN - 1);
  xrtBufferHandle bo = s->f.bo_alloc(s->dev, size, XRT_BO_FLAGS_NONE, (xrtMemoryGroup)s->group);
  if (!bo) return loom_fail(msg, LOOM_E_NOMEM, "xrt: cannot allocate %zu bytes", bytes);
  void *host = s->f.bo_map(bo);
  if (!host) {
    s->f.bo_free(bo);
    return loom_fail(msg, LOOM_E_NOMEM, "xrt: cannot map a %zu-byte buffer", bytes);
  }
  memset(host, 0, size);
  s->f.bo_sync(bo, XCL_BO_SYNC_BO_TO_DEVICE, size, 0);
  *buf = (struct loom_backend_buffer){
      .host = host, .dev_addr = s->f.bo_address(bo), .size = size, .priv = bo};
  return LOOM_OK;
}

static void xrt_free(void *state, struct loom_backend_buffer *buf) {
  struct xrt_state *s = state;
  s->f.bo_free(buf->priv);
  buf->host = NULL;
}

static loom_status xrt_sync(void *state, struct loom_backend_buffer *buf, loom_sync_dir dir,
                            char msg[LOOM_MSG_MAX]) {
  struct xrt_state *s = state;
  enum xclBOSyncDirection d =
      dir == LOOM_SYNC_TO_DEVICE ? XCL_BO_SYNC_BO_TO_DEVICE : XCL_BO_SYNC_BO_FROM_DEVICE;
  if (s->f.bo_sync(buf->priv, d, buf->size, 0) != 0)
    return loom_fail(msg, LOOM_E_IO, "xrt: cannot sync a %zu-byte buffer", buf->size);
  return LOOM_OK;
}

/* ---- jobs ---- */

static int still_running(enum ert_cmd_state st) {
  return st == ERT_CMD_STATE_NEW || st == ERT_CMD_STATE_QUEUED ||
         st == ERT_CMD_STATE_SUBMITTED || st == ERT_CMD_STATE_RUNNING;
}

static loom_status set_args(struct xrt_state *s, const struct loom_backend_buffer *insns,
                            uint32_t insn_count,
                            const struct loom_backend_buffer *const segments[8]) {
  int bad = s->f.run_set_arg(s->run, 0, (xrtBufferHandle)insns->priv);
  bad |= s->f.run_set_arg(s->run, 1, insn_count);
  for (int i = 0; i < LOOM_NUM_SEGMENTS; i++) {
    int mapped = segments[i] && segments[i]->size;
    xrtBufferHandle bo = mapped ? segments[i]->priv : insns->priv;
    uint64_t size = mapped ? (uint64_t)segments[i]->size : 0;
    bad |= s->f.run_set_arg(s->run, 2 + 2 * i, bo);
    bad |= s->f.run_set_arg(s->run, 3 + 2 * i, size);
  }
  return bad ? LOOM_E_IO : LOOM_OK;
}

static loom_status xrt_submit(void *state, const struct loom_backend_buffer *insns,
                              uint32_t insn_count,
                              const struct loom_backend_buffer *const segments[8],
                              char msg[LOOM_MSG_MAX]) {
  struct xrt_state *s = state;
  if (s->stuck)
    return loom_fail(msg, LOOM_E_IO,
                     "xrt: %s: XRT still holds the compute unit of a timed-out job; reset the "
                     "card (xbutil reset) and reopen",
                     s->where);
  s->run = s->f.run_open(s->kernel);
  if (!s->run) return loom_fail(msg, LOOM_E_IO, "xrt: %s: cannot create a run", s->where);
  if (set_args(s, insns, insn_count, segments) != LOOM_OK || s->f.run_start(s->run) != 0) {
    s->f.run_close(s->run);
    s->run = NULL;
    return loom_fail(msg, LOOM_E_IO,
                     "xrt: %s: cannot start kernel: its arguments do not follow the register "
                     "map (docs/xrt.md)",
                     s->where);
  }
  return LOOM_OK;
}

static loom_status xrt_wait(void *state, uint32_t timeout_ms, struct loom_job_result *res,
                            char msg[LOOM_MSG_MAX]) {
  struct xrt_state *s = state;
  if (!s->run) return loom_fail(msg, LOOM_E_INVALID, "xrt: no job submitted");
  enum ert_cmd_state st =
      s->f.run_wait_for(s->run, timeout_ms ? timeout_ms : XRT_DEFAULT_TIMEOUT_MS);
  if (st == ERT_CMD_STATE_COMPLETED) {
    s->f.run_close(s->run);
    s->run = NULL;
    loom_hw_collect(&s->io, res);
    return LOOM_OK;
  }
  if (still_running(st)) {
    s->stuck = 1;
    return loom_fail(msg, LOOM_E_TIMEOUT, "xrt: %s: no ap_done", s->where);
  }
  s->f.run_close(s->run);
  s->run = NULL;
  return loom_fail(msg, LOOM_E_IO, "xrt: %s: XRT ended the run in state %d", s->where, (int)st);
}

/* SOFT_RESET through hwregs.c; then give XRT a moment to retire the run. */
static loom_status xrt_reset(void *state, char msg[LOOM_MSG_MAX]) {
  struct xrt_state *s = state;
  loom_status st = loom_hw_reset(&s->io, msg);
  if (st != LOOM_OK) return st;
  if (s->stuck && still_running(s->f.run_wait_for(s->run, 1000)))
    return loom_fail(msg, LOOM_E_IO,
                     "xrt: %s: accelerator reset, but XRT still counts the job as running; "
                     "reset the card (xbutil reset)",
                     s->where);
  if (s->stuck) {
    s->f.run_close(s->run);
    s->run = NULL;
    s->stuck = 0;
  }
  return LOOM_OK;
}

#endif /* LOOM_HAVE_XRT */

const struct loom_backend_ops loom_backend_xrt = {
    .name = "xrt",
    .open = xrt_open,
    .close = xrt_close,
    .alloc = xrt_alloc,
    .free = xrt_free,
    .sync = xrt_sync,
    .submit = xrt_submit,
    .wait = xrt_wait,
    .reset = xrt_reset,
};
