/*
 * outfile.c - writing a file so that a failure never damages what was
 * there (outfile.h).
 *
 * A regular target (or a new path) is replaced atomically: the bytes go to
 * a temporary file in the target's directory (so that rename(2) stays on
 * one file system), created with O_EXCL under a random name, given the old
 * file's mode (or the umask's for a new one), fsync'ed, and renamed over the
 * target.  Readers see the old file or the new one, never a truncated mix,
 * and a full disk, a quota or an I/O error leaves the old file untouched.
 * A symbolic link to a regular file is followed: the file it points to is
 * replaced and the link stays a link.  A file the user may not write is
 * refused, as a plain open would refuse it, although the rename could
 * replace it.
 *
 * A target that is not a regular file is written in place and nothing is
 * ever renamed over it or unlinked: /dev/null, /dev/full, a FIFO, a
 * terminal, /dev/stdout.  Replacing such a node would destroy it (as root,
 * unlinking /dev/full after a failed write deleted the system's device
 * node), and for a pipe there is nothing to make atomic.  A regular file
 * that is this process's stdout or stderr (`-o /dev/stdout > out.s`) is
 * written through that descriptor, so the shell's redirection (truncate or
 * append) decides, as it would for output printed to stdout.
 *
 * Writes go through a stdio stream whose write function records the first
 * errno (fopencookie), so the message names what really failed, not
 * whatever errno holds after fclose.  Nothing here is global: every
 * outfile carries its own state.
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

struct loom_outfile {
  FILE *fp;
  int fd;
  int err;      /* first errno of a write, 0 while all went well */
  char *name;   /* the path as given, for messages */
  char *target; /* the file the temporary replaces (a symlink resolved) */
  char *tmp;    /* the temporary file; NULL when writing in place */
};

static ssize_t cookie_write(void *cookie, const char *buf, size_t n) {
  struct loom_outfile *o = cookie;
  size_t done = 0;
  while (done < n && !o->err) {
    ssize_t w = write(o->fd, buf + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) o->err = w < 0 ? errno : EIO;
    else done += (size_t)w;
  }
  return (ssize_t)done; /* short: stdio marks the stream in error */
}

static int cookie_close(void *cookie) {
  (void)cookie; /* the descriptor is closed by commit/abort, after fsync */
  return 0;
}

static loom_status out_fail(char msg[LOOM_MSG_MAX], const char *name, const char *what, int err) {
  return loom_fail(msg, err == ENOMEM ? LOOM_E_NOMEM : LOOM_E_IO, "%s: %s: %s", name, what, strerror(err));
}

static void out_free(struct loom_outfile *o) {
  free(o->name);
  free(o->target);
  free(o->tmp);
  free(o);
}

/* Is `st` the file behind our stdout or stderr?  Returns that fd, or -1. */
static int std_stream_of(const struct stat *st) {
  for (int fd = 1; fd <= 2; fd++) {
    struct stat s;
    if (fstat(fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino) return fd;
  }
  return -1;
}

static uint64_t random_suffix(void) {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15u ^ (uint64_t)getpid() << 32;
  }
  return r;
}

/* Creates "DIR/.BASE.XXXXXXXXXXXX.tmp" beside o->target.  `mode` < 0: a new
 * file (0666 less the umask), else the replaced file's permission bits. */
static int create_temp(struct loom_outfile *o, int mode) {
  const char *slash = strrchr(o->target, '/');
  size_t dir = slash ? (size_t)(slash - o->target) + 1 : 0, n = strlen(o->target) + 32;
  if (!(o->tmp = malloc(n))) return ENOMEM;
  for (int tries = 0; tries < 64; tries++) {
    snprintf(o->tmp, n, "%.*s.%s.%012llx.tmp", (int)dir, o->target, o->target + dir,
             (unsigned long long)(random_suffix() & 0xFFFFFFFFFFFFull));
    o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode < 0 ? 0666 : 0600);
    if (o->fd >= 0) {
      if (mode >= 0 && fchmod(o->fd, (mode_t)mode)) { /* best effort: keep going with 0600 */ }
      return 0;
    }
    if (errno != EEXIST) break;
  }
  int err = errno;
  free(o->tmp);
  o->tmp = NULL;
  return err;
}

/* Decides in place or temporary, and opens the descriptor. */
static loom_status open_fd(struct loom_outfile *o, const char *path, char msg[LOOM_MSG_MAX]) {
  struct stat st, lst;
  int exists = stat(path, &st) == 0, err = errno;
  if (!exists && err != ENOENT) return out_fail(msg, path, "cannot write", err);
  int dangling = !exists && lstat(path, &lst) == 0; /* a symlink to nothing: create through it */
  if ((exists && !S_ISREG(st.st_mode)) || dangling) {
    o->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | (dangling ? O_CREAT : O_TRUNC), 0666);
    return o->fd < 0 ? out_fail(msg, path, "cannot open for writing", errno) : LOOM_OK;
  }
  /* a file the user may not write stays refused, as open(O_TRUNC) refused it */
  if (exists && access(path, W_OK)) return out_fail(msg, path, "cannot write", errno);
  int fd = exists ? std_stream_of(&st) : -1;
  if (fd >= 0) {
    o->fd = dup(fd);
    return o->fd < 0 ? out_fail(msg, path, "cannot write", errno) : LOOM_OK;
  }
  o->target = exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) ? realpath(path, NULL) : strdup(path);
  if (!o->target) return out_fail(msg, path, "cannot resolve the path", errno);
  if ((err = create_temp(o, exists ? (int)(st.st_mode & 07777) : -1)))
    return out_fail(msg, path, "cannot create a temporary file beside it", err);
  if (exists && geteuid() == 0 && fchown(o->fd, st.st_uid, st.st_gid)) { /* keep root's, then */ }
  return LOOM_OK;
}

loom_status loom_outfile_open(const char *path, struct loom_outfile **out, char msg[LOOM_MSG_MAX]) {
  *out = NULL;
  struct loom_outfile *o = calloc(1, sizeof *o);
  if (!o || !(o->name = strdup(path))) {
    free(o);
    return loom_fail(msg, LOOM_E_NOMEM, "%s: out of memory", path);
  }
  o->fd = -1;
  loom_status st = open_fd(o, path, msg);
  cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
  if (st == LOOM_OK && !(o->fp = fopencookie(o, "w", io))) st = out_fail(msg, path, "cannot write", errno);
  if (st != LOOM_OK) {
    loom_outfile_abort(o);
    return st;
  }
  *out = o;
  return LOOM_OK;
}

FILE *loom_outfile_stream(struct loom_outfile *o) { return o->fp; }

/* Makes the rename itself durable; a failure here loses nothing. */
static void sync_dir(const char *target) {
  const char *slash = strrchr(target, '/');
  char dir[4096];
  if (!slash) snprintf(dir, sizeof dir, ".");
  else snprintf(dir, sizeof dir, "%.*s", slash == target ? 1 : (int)(slash - target), target);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    if (fsync(fd)) { /* a directory that cannot sync: the rename is still done */ }
    close(fd);
  }
}

loom_status loom_outfile_commit(struct loom_outfile *o, char msg[LOOM_MSG_MAX]) {
  int err = fflush(o->fp) ? (o->err ? o->err : errno) : o->err;
  fclose(o->fp);
  o->fp = NULL;
  if (!err && o->tmp && fsync(o->fd)) err = errno;
  if (close(o->fd) && !err && errno != EINTR) err = errno;
  o->fd = -1;
  if (!err && o->tmp && rename(o->tmp, o->target)) {
    err = errno;
    loom_fail(msg, LOOM_E_IO, "%s: cannot rename the temporary file %s over it: %s", o->name, o->tmp,
              strerror(err));
    loom_outfile_abort(o);
    return LOOM_E_IO;
  }
  if (err) {
    out_fail(msg, o->name, "write failed", err);
    loom_outfile_abort(o);
    return LOOM_E_IO;
  }
  if (o->tmp) sync_dir(o->target);
  out_free(o);
  return LOOM_OK;
}

void loom_outfile_abort(struct loom_outfile *o) {
  if (!o) return;
  if (o->fp) fclose(o->fp);
  if (o->fd >= 0) close(o->fd);
  if (o->tmp) unlink(o->tmp); /* ours; the target is never unlinked */
  out_free(o);
}

loom_status loom_outfile_write(const char *path, const void *bytes, size_t size, char msg[LOOM_MSG_MAX]) {
  struct loom_outfile *o;
  loom_status st = loom_outfile_open(path, &o, msg);
  if (st != LOOM_OK) return st;
  if (size && fwrite(bytes, 1, size, o->fp) != size && !o->err) o->err = EIO;
  return loom_outfile_commit(o, msg);
}

loom_status loom_outfile_check(const char *path, const char *const *inputs, char msg[LOOM_MSG_MAX]) {
  struct stat o, in;
  if (!path || stat(path, &o) != 0 || !S_ISREG(o.st_mode)) return LOOM_OK;
  for (int i = 0; inputs && inputs[i]; i++)
    if (stat(inputs[i], &in) == 0 && in.st_dev == o.st_dev && in.st_ino == o.st_ino)
      return loom_fail(msg, LOOM_E_INVALID, "%s: the output is the input %s (the same file); choose "
                       "another output", path, inputs[i]);
  return LOOM_OK;
}
