/*
 * device.c - opening a device by backend name, and the backend registry.
 *
 * The registry is the list in backends.def, expanded here into
 * loom_backends[]: a backend is compiled in when its file exists and its
 * line is in that list, nothing else (no constructors, no weak symbols, no
 * plugin loading).  The names of backends that Loom defines but this build
 * lacks are kept below only so that "tsim" gets a better message than a
 * typo does.
 *
 * (The names of statuses and data types are the core's: driver/core/status.c.)
 *
 * A device is the backend's state plus the hardware configuration it
 * implements and the message of the last failed call.  Nothing here is
 * global and mutable: every call gets what it needs from its arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#define LOOM_BACKEND(name) extern const struct loom_backend_ops loom_backend_##name;
#include "backends.def"
#undef LOOM_BACKEND

#define LOOM_BACKEND(name) &loom_backend_##name,
const struct loom_backend_ops *const loom_backends[] = {
#include "backends.def"
    NULL};
#undef LOOM_BACKEND

#define LOOM_BACKEND(name) #name,
static const char *const backend_names[] = {
#include "backends.def"
    NULL};
#undef LOOM_BACKEND

/* Backends Loom defines, compiled in or not (docs/runtime.md). */
static const char *const known_backends[] = {"fsim", "tsim", "linux", "xrt", NULL};

const char *const *loom_backend_names(void) { return backend_names; }

static const struct loom_backend_ops *find_backend(const char *name) {
  for (int i = 0; loom_backends[i]; i++)
    if (!strcmp(loom_backends[i]->name, name)) return loom_backends[i];
  return NULL;
}

static int is_known(const char *name) {
  for (int i = 0; known_backends[i]; i++)
    if (!strcmp(known_backends[i], name)) return 1;
  return 0;
}

/* "fsim, tsim": the compiled-in backends, for messages. */
static void compiled_list(char *out, size_t n) {
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; loom_backends[i] && len < n; i++)
    len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", loom_backends[i]->name);
}

static loom_status no_such_backend(const char *name, char msg[LOOM_MSG_MAX]) {
  char list[256];
  compiled_list(list, sizeof list);
  if (is_known(name))
    return loom_fail(msg, LOOM_E_UNSUPPORTED,
                     "backend '%s' is not compiled into this build (compiled in: %s)", name, list);
  return loom_fail(msg, LOOM_E_NOTFOUND, "unknown backend '%s' (compiled in: %s)", name, list);
}

loom_status loom_device_open(const char *backend, const char *options, loom_device **out,
                             char msg[LOOM_MSG_MAX]) {
  if (out) *out = NULL;
  if (!backend || !out) return loom_fail(msg, LOOM_E_INVALID, "loom_device_open: NULL argument");
  const struct loom_backend_ops *ops = find_backend(backend);
  if (!ops) return no_such_backend(backend, msg);
  return loom_device_open_ops(ops, options, out, msg);
}

const char *const loom_device_option_keys[] = {"trust_native", NULL};

/* trust_native=0|1 (docs/hostcode.md): run native code without a signature. */
static loom_status device_options(const char *options, int *trust, char msg[LOOM_MSG_MAX]) {
  char v[16];
  *trust = 0;
  if (!loom_option_get(options, "trust_native", v, sizeof v)) return LOOM_OK;
  if (strcmp(v, "0") && strcmp(v, "1"))
    return loom_fail(msg, LOOM_E_INVALID, "option trust_native=%s: expected 0 or 1", v);
  *trust = v[0] == '1';
  return LOOM_OK;
}

loom_status loom_device_open_ops(const struct loom_backend_ops *ops, const char *options,
                                 loom_device **out, char msg[LOOM_MSG_MAX]) {
  int trust;
  if (out) *out = NULL;
  if (!ops || !out) return loom_fail(msg, LOOM_E_INVALID, "loom_device_open: NULL argument");
  if (device_options(options, &trust, msg) != LOOM_OK) return LOOM_E_INVALID;
  loom_device *dev = calloc(1, sizeof *dev);
  if (!dev) return loom_fail(msg, LOOM_E_NOMEM, "%s: out of memory", ops->name);
  char scratch[LOOM_MSG_MAX] = "";
  loom_status st = ops->open(options, &dev->state, &dev->cfg, msg ? msg : scratch);
  if (st != LOOM_OK) {
    free(dev);
    return st;
  }
  LOOM_ASSERT(dev->cfg);
  dev->ops = ops;
  dev->trust_native = trust;
  *out = dev;
  if (msg) msg[0] = '\0';
  return LOOM_OK;
}

void loom_device_close(loom_device *dev) {
  if (!dev) return;
  if (dev->job_pending && dev->ops->reset) dev->ops->reset(dev->state, dev->msg);
  dev->ops->close(dev->state);
  free(dev);
}

const char *loom_device_error(const loom_device *dev) { return dev ? dev->msg : "no device"; }

const struct loom_hw_config *loom_device_config(const loom_device *dev) {
  return dev ? dev->cfg : NULL;
}

const char *loom_device_backend(const loom_device *dev) { return dev ? dev->ops->name : NULL; }

void loom_device_set_progress(loom_device *dev, void (*fn)(void *ctx, uint64_t done), void *ctx) {
  if (dev && dev->ops->set_progress) dev->ops->set_progress(dev->state, fn, ctx);
}

loom_status loom_device_set_trace(loom_device *dev, int on) {
  if (!dev) return LOOM_E_INVALID;
  if (!dev->ops->set_trace)
    return loom_fail(dev->msg, LOOM_E_UNSUPPORTED,
                     "%s: this backend cannot record timelines (use tsim, or fsim with timing=1)",
                     dev->ops->name);
  return dev->ops->set_trace(dev->state, on, dev->msg);
}

const struct loom_trace_event *loom_device_trace(const loom_device *dev, size_t *count) {
  *count = 0;
  if (!dev || !dev->ops->trace) return NULL;
  return dev->ops->trace(dev->state, count);
}
