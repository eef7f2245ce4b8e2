/*
 * readfile.c - whole-file reads with a size cap.
 *
 * The file is read in growing chunks until EOF rather than sized with
 * stat(), so pipes and /dev/stdin work and a file that grows while it is
 * read cannot overrun the buffer.  The cap is checked as bytes arrive.
 */
#include "readfile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static loom_status read_fail(char msg[LOOM_MSG_MAX], loom_status st, const char *path,
                             const char *what) {
  if (msg) snprintf(msg, LOOM_MSG_MAX, "%s: %s", path, what);
  return st;
}

/* Grows *buf so that it holds at least `need` bytes; 0 on success. */
static int grow(uint8_t **buf, size_t *cap, size_t need) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap : 65536;
  while (n < need) {
    if (n > SIZE_MAX / 2) return -1;
    n *= 2;
  }
  uint8_t *p = realloc(*buf, n);
  if (!p) return -1;
  *buf = p;
  *cap = n;
  return 0;
}

static loom_status read_stream(FILE *fp, const char *path, uint64_t max, uint8_t **out,
                               size_t *size, char msg[LOOM_MSG_MAX]) {
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (grow(&buf, &cap, len + 65536 + 1)) {
      free(buf);
      return read_fail(msg, LOOM_E_NOMEM, path, "out of memory reading the file");
    }
    size_t got = fread(buf + len, 1, cap - len - 1, fp);
    len += got;
    if ((uint64_t)len > max) {
      free(buf);
      char what[128];
      snprintf(what, sizeof what, "file is larger than the %" PRIu64 "-byte limit", max);
      return read_fail(msg, LOOM_E_FORMAT, path, what);
    }
    if (got == 0) break;
  }
  if (ferror(fp)) {
    free(buf);
    return read_fail(msg, LOOM_E_IO, path, "read error");
  }
  buf[len] = 0;
  *out = buf;
  *size = len;
  return LOOM_OK;
}

loom_status loom_read_file(const char *path, uint64_t max, uint8_t **out, size_t *size,
                           char msg[LOOM_MSG_MAX]) {
  *out = NULL;
  *size = 0;
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    loom_status st = errno == ENOENT ? LOOM_E_NOTFOUND : LOOM_E_IO;
    return read_fail(msg, st, path, strerror(errno));
  }
  loom_status st = read_stream(fp, path, max, out, size, msg);
  fclose(fp);
  return st;
}
