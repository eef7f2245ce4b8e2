/*
 * hostgen_link.c - object file -> ELF shared object, by a linker run as a
 * subprocess of the compiler.
 *
 * LLVM's C API emits relocatable objects; dlopen wants a shared object.
 * Linking one object with no libraries is a small job, but doing it by
 * hand means a relocation engine per target (x86-64, AArch64, ARM), so
 * the compiler runs a real linker: LLD (Debian's lld-15, which links every
 * target from one binary and needs no sysroot), else the target's GNU ld
 * from binutils.  Only the compiler does this; the runtime never links.
 *
 * The image is made to load with no side effects (hostcode_elf.c checks
 * it): -nostdlib (no crt files, no libc), -z defs (an undefined symbol is
 * an error here rather than at dlopen on the board: the generated code
 * calls nothing), -z now and relro, a non-executable stack, no build-id
 * (identical inputs give identical bytes), stripped of everything but the
 * dynamic symbols, both hash styles so any loader finds the entries.
 *
 * The object and the result pass through a private temporary directory
 * ($TMPDIR, else /tmp), removed afterwards.  The linker's messages are
 * kept in a file there and quoted in the error when it fails.
 */
#include "sw_compiler/llvm/hostgen_int.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct tmp {
  char dir[256], obj[300], so[300], log[300];
};

static int find_in_path(const char *name, char *out, size_t len) {
  if (strchr(name, '/')) return access(name, X_OK) == 0 ? (snprintf(out, len, "%s", name), 0) : -1;
  const char *path = getenv("PATH");
  for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
    size_t n = strcspn(p, ":");
    snprintf(out, len, "%.*s/%s", (int)n, p, name);
    if (n && access(out, X_OK) == 0) return 0;
    p += n + (p[n] == ':');
  }
  return -1;
}

/* GNU ld for the target: the cross binutils' name, or plain `ld` when the
 * target is the machine the compiler was built for. */
static const char *gnu_ld(const struct hg_target *t) {
  if (!strncmp(t->triple, "aarch64", 7)) return "aarch64-linux-gnu-ld";
  if (!strncmp(t->triple, "armv7", 5)) return "arm-linux-gnueabihf-ld";
  return "x86_64-linux-gnu-ld";
}

static int pick_linker(const struct hg_target *t, const char *want, char *out, size_t len,
                       struct ir_error *err) {
  const char *env = getenv("LOOM_LD");
  if (want || (env && *env)) {
    const char *name = want ? want : env;
    if (!find_in_path(name, out, len)) return 0;
    return ir_errorf(err, "%s: linker '%s' not found", want ? "--linker" : "LOOM_LD", name), -1;
  }
  const char *cands[] = {"ld.lld-15", "ld.lld", gnu_ld(t),
#if defined(__x86_64__)
                         !strncmp(t->triple, "x86_64", 6) ? "ld" : NULL,
#endif
                         NULL};
  for (int i = 0; cands[i]; i++)
    if (!find_in_path(cands[i], out, len)) return 0;
  return ir_errorf(err, "no linker for %s: install lld-15 (apt-get install lld-15) or binutils for the "
                   "target, or name one with LOOM_LD", t->triple), -1;
}

static int write_file(const char *path, const uint8_t *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  int ok = fwrite(p, 1, n, f) == n;
  return (fclose(f) == 0 && ok) ? 0 : -1;
}

static int read_file(const char *path, uint8_t **p, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  struct stat st;
  if (fstat(fileno(f), &st) || st.st_size <= 0) return fclose(f), -1;
  *n = (size_t)st.st_size;
  *p = ir_xmalloc(*n);
  int ok = fread(*p, 1, *n, f) == *n;
  fclose(f);
  if (!ok) free(*p), *p = NULL;
  return ok ? 0 : -1;
}

/* The first lines of the linker's output, for the error message. */
static void log_text(const char *path, char *out, size_t len) {
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(out, 1, len - 1, f) : 0;
  out[n] = 0;
  if (f) fclose(f);
  for (char *c = out; *c; c++)
    if (*c == '\n') *c = c[1] ? ';' : 0;
}

static int run_linker(const char *ld, const struct tmp *tp, struct ir_error *err) {
  char *argv[] = {(char *)ld, "-shared", "-nostdlib", "-z", "defs", "-z", "now", "-z", "relro",
                  "-z", "noexecstack", "--hash-style=both", "--build-id=none", "-s",
                  "-soname", "loom-hostcode.so", "-o", (char *)tp->so, (char *)tp->obj, NULL};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, tp->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, ld, &fa, NULL, argv, environ), status = 0;
  posix_spawn_file_actions_destroy(&fa);
  if (rc) return ir_errorf(err, "cannot run the linker %s: %s", ld, strerror(rc)), -1;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) continue;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  char text[600];
  log_text(tp->log, text, sizeof text);
  return ir_errorf(err, "the linker %s failed on the generated code: %s", ld, text[0] ? text : "no message"), -1;
}

static int make_tmp(struct tmp *tp, struct ir_error *err) {
  const char *base = getenv("TMPDIR");
  snprintf(tp->dir, sizeof tp->dir, "%s/loom-hostgen-XXXXXX", base && *base ? base : "/tmp");
  if (!mkdtemp(tp->dir)) return ir_errorf(err, "%s: cannot create a temporary directory: %s", tp->dir, strerror(errno)), -1;
  snprintf(tp->obj, sizeof tp->obj, "%s/code.o", tp->dir);
  snprintf(tp->so, sizeof tp->so, "%s/code.so", tp->dir);
  snprintf(tp->log, sizeof tp->log, "%s/ld.log", tp->dir);
  return 0;
}

static void remove_tmp(const struct tmp *tp) {
  unlink(tp->obj);
  unlink(tp->so);
  unlink(tp->log);
  rmdir(tp->dir);
}

int hg_link_shared(const struct hg_target *t, const char *linker, const uint8_t *obj,
                   size_t obj_size, uint8_t **so, size_t *so_size, struct ir_error *err) {
  char ld[512];
  struct tmp tp;
  *so = NULL;
  if (pick_linker(t, linker, ld, sizeof ld, err) || make_tmp(&tp, err)) return -1;
  int rc = write_file(tp.obj, obj, obj_size);
  if (rc) ir_errorf(err, "%s: cannot write: %s", tp.obj, strerror(errno));
  if (!rc) rc = run_linker(ld, &tp, err);
  if (!rc && (rc = read_file(tp.so, so, so_size))) ir_errorf(err, "%s: cannot read the linked code", tp.so);
  remove_tmp(&tp);
  return rc;
}
