/*
 * hostcode.c - loading the native host code of a .loom file and calling it.
 *
 * The image is an ELF shared object in the file's bytes.  dlopen wants a
 * path, and the runtime must not need a writable directory, so the image
 * goes into an anonymous memory file (memfd_create, Linux 3.17+) that is
 * opened as /proc/self/fd/N.  That fd stays open as long as the library is
 * loaded: glibc recognises an already-loaded object by its path, and a
 * closed fd number reused by the next model would otherwise hand that model
 * the previous model's code.  The loader resolves every symbol at once
 * (RTLD_NOW) and keeps them out of the global namespace (RTLD_LOCAL), so
 * two models with entry points of the same name never see each other's.
 *
 * Policy (docs/hostcode.md): an image for another machine (hostcode_elf.c)
 * means "use the portable host ops", and is reported, not refused.  An
 * image for this machine runs only with the user's consent: the file is
 * signed with the user's own key (hostcode_trust.c; `loom compile` signs
 * what it writes), or the caller trusts it (--trust-native, the device
 * option trust_native=1).  Without consent nothing of the image is loaded
 * and the portable host ops run; loom_hostcode_describe() says why, for
 * the one line the CLI prints.  With consent, an image that fails a check,
 * does not load, or lacks an entry point is an error: a silent switch to
 * the C ops would hide a broken build and change the numbers a user sees.
 * A step that exists only as native code (LOOM_HOSTOP_NATIVE) has nothing
 * to fall back to, so a file whose image is for another machine, or not
 * consented to, is refused when it has one.
 */
#include "hostcode.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runtime.h"

struct loom_hostcode {
  const struct loom_file *f;
  loom_native_state state;
  void *dl;                 /* dlopen handle; NULL: other machine, or no consent */
  int fd;                   /* the memfd behind dl, -1 when none */
  loom_hostcode_fn *fns;    /* per step, NULL: portable */
  uint32_t n_native;
  char why[320];            /* why the image is not used: "its native code for T is not signed" */
  char text[400];           /* loom_hostcode_describe() */
};

/* ---- checks that do not depend on the machine ---- */

static loom_status check_signatures(const struct loom_file *f, const char *name, char msg[LOOM_MSG_MAX]) {
  for (uint32_t i = 0; i < f->hostcode->entry_count; i++) {
    const struct loom_file_hostcode_entry *e = &f->hostcode_entries[i];
    if (e->step < f->step_count && loom_hostcode_signature(f, e->step) == e->signature) continue;
    return loom_fail(msg, LOOM_E_FORMAT, "%s: HOSTCODE entry %u: the native code of step %u was built "
                     "for other tensors or parameters (signature 0x%016" PRIx64 ", the step's is 0x%016"
                     PRIx64 ")", name, i, e->step, e->signature,
                     e->step < f->step_count ? loom_hostcode_signature(f, e->step) : 0);
  }
  return LOOM_OK;
}

/* A NATIVE step needs its native code: an entry, and an image that runs here. */
static loom_status check_native_steps(const struct loom_hostcode *hc, const char *name,
                                      char msg[LOOM_MSG_MAX]) {
  const struct loom_file *f = hc->f;
  for (uint32_t i = 0; i < f->step_count; i++) {
    if (f->steps[i].kind != LOOM_STEP_HOST || f->steps[i].index != LOOM_HOSTOP_NATIVE || hc->fns[i])
      continue;
    if (hc->dl || !f->hostcode)
      return loom_fail(msg, LOOM_E_FORMAT, "%s: step %u exists only as native code, and the file has "
                       "none for it", name, i);
    if (hc->state == LOOM_NATIVE_UNTRUSTED)
      return loom_fail(msg, LOOM_E_UNSUPPORTED, "%s: step %u exists only as native code, and %s; pass "
                       "--trust-native if you trust this file, or compile it yourself", name, i, hc->why);
    return loom_fail(msg, LOOM_E_UNSUPPORTED, "%s: step %u exists only as native code, and %s; "
                     "compile the model for this machine (--host-triple)", name, i, hc->why);
  }
  return LOOM_OK;
}

/* ---- loading ---- */

static int memfd(void) {
#ifdef MFD_EXEC
  /* Linux 6.3+ with vm.memfd_noexec set refuses to map a memfd executable
   * unless it was created with MFD_EXEC; older kernels reject the flag. */
  int fd = memfd_create("loom-hostcode", MFD_CLOEXEC | MFD_EXEC);
  if (fd >= 0 || errno != EINVAL) return fd;
#endif
  return memfd_create("loom-hostcode", MFD_CLOEXEC);
}

static int write_all(int fd, const uint8_t *p, uint64_t n) {
  while (n) {
    ssize_t w = write(fd, p, n > (1u << 30) ? (1u << 30) : (size_t)n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w, n -= (uint64_t)w;
  }
  return 0;
}

static loom_status load_image(struct loom_hostcode *hc, const char *name, char msg[LOOM_MSG_MAX]) {
  const struct loom_file_hostcode *h = hc->f->hostcode;
  char why[128], path[64];
  if (loom_hostcode_elf_check(hc->f->hostcode_image, h->image_size, why))
    return loom_fail(msg, LOOM_E_FORMAT, "%s: HOSTCODE: %s", name, why);
  hc->fd = memfd();
  if (hc->fd < 0)
    return loom_fail(msg, LOOM_E_IO, "%s: HOSTCODE: memfd_create failed: %s", name, strerror(errno));
  if (write_all(hc->fd, hc->f->hostcode_image, h->image_size))
    return loom_fail(msg, LOOM_E_IO, "%s: HOSTCODE: writing the image to memory failed: %s", name,
                     strerror(errno));
  snprintf(path, sizeof path, "/proc/self/fd/%d", hc->fd);
  hc->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!hc->dl) {
    const char *e = dlerror();
    return loom_fail(msg, LOOM_E_IO, "%s: HOSTCODE: the native code does not load: %s", name,
                     e ? e : "dlopen failed");
  }
  return LOOM_OK;
}

static loom_status bind_entries(struct loom_hostcode *hc, const char *name, char msg[LOOM_MSG_MAX]) {
  const struct loom_file *f = hc->f;
  for (uint32_t i = 0; i < f->hostcode->entry_count; i++) {
    const struct loom_file_hostcode_entry *e = &f->hostcode_entries[i];
    const char *sym = loom_file_string(f, e->symbol);
    void *p = dlsym(hc->dl, sym);
    if (!p)
      return loom_fail(msg, LOOM_E_FORMAT, "%s: HOSTCODE entry %u: the image has no symbol '%.100s' "
                       "(step %u)", name, i, sym, e->step);
    /* POSIX guarantees that a function's address survives this conversion. */
    memcpy(&hc->fns[e->step], &p, sizeof p);
    hc->n_native++;
  }
  return LOOM_OK;
}

/* Compares the image's machine with this process's; fills hc->why. */
static loom_status match_machine(struct loom_hostcode *hc, const char *name, int *match,
                                 char msg[LOOM_MSG_MAX]) {
  const struct loom_file *f = hc->f;
  struct loom_hostcode_machine img, self = loom_hostcode_self();
  char why[128], mi[64], ms[64];
  if (loom_hostcode_elf_machine(f->hostcode_image, f->hostcode->image_size, &img, why))
    return loom_fail(msg, LOOM_E_FORMAT, "%s: HOSTCODE: %s", name, why);
  *match = loom_hostcode_machine_is_self(&img);
  loom_hostcode_machine_text(&img, mi, sizeof mi);
  loom_hostcode_machine_text(&self, ms, sizeof ms);
  const char *triple = loom_file_string(f, f->hostcode->triple);
  if (!*match)
    snprintf(hc->why, sizeof hc->why, "its native code for %.80s (%s) does not run on this machine "
             "(%s)", triple, mi, ms);
  return LOOM_OK;
}

/* Has the user consented to this file's code?  Signed with their key, or
 * trusted by the caller; otherwise hc->why says what is missing. */
static int consented(struct loom_hostcode *hc, int trust) {
  struct loom_key k;
  char msg[LOOM_MSG_MAX], mine[17], theirs[17];
  const char *triple = loom_file_string(hc->f, hc->f->hostcode->triple);
  if (trust) return 1;
  loom_status st = loom_key_load(0, &k, msg);
  enum loom_sig_state sig = loom_file_signed_by(hc->f, st == LOOM_OK ? &k : NULL);
  if (sig == LOOM_SIG_MINE) return 1;
  loom_key_id_text(k.id, mine);
  if (hc->f->signature) loom_key_id_text(hc->f->signature->key_id, theirs);
  if (st != LOOM_OK && st != LOOM_E_NOTFOUND)
    snprintf(hc->why, sizeof hc->why, "its native code for %.60s cannot be checked (%.200s)", triple, msg);
  else if (sig == LOOM_SIG_NONE)
    snprintf(hc->why, sizeof hc->why, "its native code for %.60s is not signed", triple);
  else if (st == LOOM_E_NOTFOUND)
    snprintf(hc->why, sizeof hc->why, "its native code for %.60s is signed with key %s, and there is no key "
             "here (%.150s)", triple, theirs, k.path);
  else if (sig == LOOM_SIG_OTHER_KEY)
    snprintf(hc->why, sizeof hc->why, "its native code for %.60s is signed with key %s, not with yours "
             "(%s, %.150s)", triple, theirs, mine, k.path);
  else
    snprintf(hc->why, sizeof hc->why, "its native code for %.60s was changed after it was signed with "
             "your key", triple);
  return 0;
}

static loom_status open_image(struct loom_hostcode *hc, const char *name, int trust, char msg[LOOM_MSG_MAX]) {
  int match;
  loom_status st = check_signatures(hc->f, name, msg);
  if (st == LOOM_OK) st = match_machine(hc, name, &match, msg);
  if (st != LOOM_OK) return st;
  hc->state = !match ? LOOM_NATIVE_OTHER_MACHINE : consented(hc, trust) ? LOOM_NATIVE_RUNS : LOOM_NATIVE_UNTRUSTED;
  if (hc->state != LOOM_NATIVE_RUNS) {
    snprintf(hc->text, sizeof hc->text, "%s: the portable host ops run%s", hc->why,
             hc->state == LOOM_NATIVE_UNTRUSTED ? " (--trust-native runs it)" : "");
    return LOOM_OK;
  }
  if (st == LOOM_OK) st = load_image(hc, name, msg);
  if (st == LOOM_OK) st = bind_entries(hc, name, msg);
  snprintf(hc->text, sizeof hc->text, "native code for %.80s: %u of the host steps",
           loom_file_string(hc->f, hc->f->hostcode->triple), hc->n_native);
  return st;
}

loom_status loom_hostcode_open(const struct loom_file *f, const char *name, int trust,
                               struct loom_hostcode **out, char msg[LOOM_MSG_MAX]) {
  *out = NULL;
  struct loom_hostcode *hc = calloc(1, sizeof *hc);
  if (!hc || !(hc->fns = calloc((size_t)f->step_count + 1, sizeof *hc->fns))) {
    free(hc);
    return loom_fail(msg, LOOM_E_NOMEM, "%s: out of memory", name);
  }
  hc->f = f;
  hc->fd = -1;
  snprintf(hc->text, sizeof hc->text, "no native code");
  loom_status st = f->hostcode ? open_image(hc, name, trust, msg) : LOOM_OK;
  if (st == LOOM_OK) st = check_native_steps(hc, name, msg);
  if (st != LOOM_OK || !f->hostcode) {
    loom_hostcode_close(hc);
    return st;
  }
  *out = hc;
  return LOOM_OK;
}

void loom_hostcode_close(struct loom_hostcode *hc) {
  if (!hc) return;
  if (hc->dl) dlclose(hc->dl);
  if (hc->fd >= 0) close(hc->fd);
  free(hc->fns);
  free(hc);
}

loom_hostcode_fn loom_hostcode_entry(const struct loom_hostcode *hc, uint32_t step) {
  return hc && step < hc->f->step_count ? hc->fns[step] : NULL;
}

int loom_hostcode_loaded(const struct loom_hostcode *hc) { return hc && hc->dl; }

loom_native_state loom_hostcode_state(const struct loom_hostcode *hc) {
  return hc ? hc->state : LOOM_NATIVE_NONE;
}

const char *loom_hostcode_describe(const struct loom_hostcode *hc) {
  return hc ? hc->text : "no native code";
}

loom_status loom_hostcode_call(loom_hostcode_fn fn, const struct loom_hostop_args *a,
                               char msg[LOOM_MSG_MAX]) {
  void *in[4] = {0}, *out[2] = {0};
  for (int k = 0; k < a->n_in && k < 4; k++) in[k] = a->in[k].data;
  for (int k = 0; k < a->n_out && k < 2; k++) out[k] = a->out[k].data;
  int32_t rc = fn(in, out);
  if (rc) return loom_fail(msg, LOOM_E_INVALID, "native code returned status %d", rc);
  return LOOM_OK;
}
