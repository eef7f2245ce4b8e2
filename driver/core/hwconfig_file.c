/*
 * hwconfig_file.c - hardware configurations from `key = value` files.
 *
 *   # my.cfg: a 1x32x32 core for the KV260
 *   name = kv32
 *   batch = 1
 *   block_in = 32
 *   ...
 *   part = xck26-sfvc784-2LV-c
 *
 * The keys are exactly those `loom config show` prints (hwconfig_rules.h),
 * each once; `#` starts a comment anywhere on a line; values are decimal
 * integers or, for name and part, a word.  An unknown, repeated or missing
 * key, a value out of range or text after the value is an error naming the
 * file, the line and the key: a configuration describes hardware, so a
 * typo must never silently fall back to a default.
 *
 * What is derived from the keys (rows, hash) is hwconfig_rules.c's, the
 * same code loomgen runs for hw/spec/loom_configs.def, so a file that
 * repeats a named configuration has its hash.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver/core/readfile.h"
#include "loom/hwconfig.h"

#define CONFIG_FILE_MAX (64u * 1024u)

enum key_id {
  KEY_NAME,
#define AS_ID(key, lo, hi, what) KEY_##key,
  LOOM_HW_INT_KEYS(AS_ID)
#undef AS_ID
  KEY_PART,
  KEY_COUNT
};

static const char *const key_names[KEY_COUNT] = {
    "name",
#define AS_NAME(key, lo, hi, what) #key,
    LOOM_HW_INT_KEYS(AS_NAME)
#undef AS_NAME
    "part"};
_Static_assert(sizeof key_names / sizeof key_names[0] == KEY_COUNT, "a name per key");

static const long key_lo[KEY_COUNT] = {
    0,
#define AS_LO(key, lo, hi, what) lo,
    LOOM_HW_INT_KEYS(AS_LO)
#undef AS_LO
    0};
static const long key_hi[KEY_COUNT] = {
    0,
#define AS_HI(key, lo, hi, what) hi,
    LOOM_HW_INT_KEYS(AS_HI)
#undef AS_HI
    0};

static int *int_field(struct loom_hw_config *c, int id) {
  switch (id) {
#define AS_FIELD(key, lo, hi, what) \
  case KEY_##key: return &c->key;
    LOOM_HW_INT_KEYS(AS_FIELD)
#undef AS_FIELD
  default: return NULL;
  }
}

struct parser {
  const char *path;
  int line;
  char *msg;
  size_t msg_size;
};

__attribute__((format(printf, 2, 3))) static int fail(struct parser *p, const char *fmt, ...) {
  va_list ap;
  int n = p->line ? snprintf(p->msg, p->msg_size, "%s:%d: ", p->path, p->line)
                  : snprintf(p->msg, p->msg_size, "%s: ", p->path);
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < p->msg_size) vsnprintf(p->msg + n, p->msg_size - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

static int find_key(const char *k, size_t n) {
  for (int i = 0; i < KEY_COUNT; i++)
    if (strlen(key_names[i]) == n && !memcmp(key_names[i], k, n)) return i;
  return -1;
}

static int word_value(struct parser *p, int id, const char *v, size_t n, char *out, size_t max) {
  if (n >= max) return fail(p, "key '%s': '%.*s' is longer than %zu characters", key_names[id], (int)n, v, max - 1);
  for (size_t i = 0; i < n; i++)
    if (isspace((unsigned char)v[i]))
      return fail(p, "key '%s': '%.*s' must be one word", key_names[id], (int)n, v);
  memcpy(out, v, n);
  out[n] = '\0';
  return 0;
}

static int int_value(struct parser *p, int id, const char *v, size_t n, int *out) {
  long x = 0;
  size_t i = 0;
  for (; i < n && isdigit((unsigned char)v[i]) && x <= key_hi[id]; i++) x = x * 10 + (v[i] - '0');
  if (i == 0 || i < n || x < key_lo[id] || x > key_hi[id])
    return fail(p, "key '%s': '%.*s' is not a whole number in %ld..%ld", key_names[id], (int)n, v,
                key_lo[id], key_hi[id]);
  *out = (int)x;
  return 0;
}

static const char *trim(const char *b, const char **e) {
  while (b < *e && isspace((unsigned char)*b)) b++;
  while (*e > b && isspace((unsigned char)(*e)[-1])) (*e)--;
  return b;
}

/* One line [b, e) without its comment: empty, or "key = value". */
static int parse_line(struct parser *p, const char *b, const char *e, struct loom_hw_config *c,
                      int seen[KEY_COUNT]) {
  const char *hash = memchr(b, '#', (size_t)(e - b));
  if (hash) e = hash;
  b = trim(b, &e);
  if (b == e) return 0;
  const char *eq = memchr(b, '=', (size_t)(e - b));
  if (!eq) return fail(p, "'%.*s' is not of the form key = value", (int)(e - b), b);
  const char *ke = eq, *k = trim(b, &ke), *ve = e, *v = trim(eq + 1, &ve);
  int id = find_key(k, (size_t)(ke - k));
  if (id < 0)
    return fail(p, "unknown key '%.*s' (see `loom config show default` for the keys)",
                (int)(ke - k), k);
  if (seen[id]) return fail(p, "key '%s' repeats line %d", key_names[id], seen[id]);
  seen[id] = p->line;
  if (v == ve) return fail(p, "key '%s' has no value", key_names[id]);
  if (id == KEY_NAME) return word_value(p, id, v, (size_t)(ve - v), c->name, sizeof c->name);
  if (id == KEY_PART) return word_value(p, id, v, (size_t)(ve - v), c->part, sizeof c->part);
  return int_value(p, id, v, (size_t)(ve - v), int_field(c, id));
}

static int check_complete(struct parser *p, const int seen[KEY_COUNT]) {
  char missing[256] = "";
  size_t n = 0;
  for (int i = 0; i < KEY_COUNT; i++)
    if (!seen[i] && n < sizeof missing)
      n += (size_t)snprintf(missing + n, sizeof missing - n, "%s%s", n ? ", " : "", key_names[i]);
  p->line = 0;
  return n ? fail(p, "missing key%s %s", strchr(missing, ',') ? "s" : "", missing) : 0;
}

int loom_hw_config_parse(const char *text, size_t len, const char *path,
                         struct loom_hw_config *out, char *msg, size_t msg_size) {
  struct parser p = {path, 0, msg, msg_size};
  int seen[KEY_COUNT] = {0};
  memset(out, 0, sizeof *out);
  if (memchr(text, '\0', len)) return fail(&p, "not a text file (it holds NUL bytes)");
  for (const char *b = text, *end = text + len; b < end;) {
    const char *e = memchr(b, '\n', (size_t)(end - b));
    if (!e) e = end;
    p.line++;
    if (parse_line(&p, b, e, out, seen)) return -1;
    b = e + 1;
  }
  return check_complete(&p, seen);
}

int loom_hw_config_read(const char *path, struct loom_hw_config *out, char *msg, size_t msg_size) {
  char why[LOOM_MSG_MAX];
  uint8_t *text = NULL;
  size_t size = 0;
  if (loom_read_file(path, CONFIG_FILE_MAX, &text, &size, why) != LOOM_OK) {
    snprintf(msg, msg_size, "%s", why);
    return -1;
  }
  int rc = loom_hw_config_parse((const char *)text, size, path, out, msg, msg_size);
  free(text);
  return rc;
}

int loom_hw_config_load(const char *path, struct loom_hw_config *out, char *msg, size_t msg_size) {
  struct loom_hw_violation v[1];
  if (loom_hw_config_read(path, out, msg, msg_size)) return -1;
  int n = loom_hw_check(out, v, 1);
  if (n) {
    snprintf(msg, msg_size, "%s: key '%s': %s%s", path, v[0].key, v[0].what,
             n > 1 ? " (and more: see `loom config check`)" : "");
    return -1;
  }
  loom_hw_derive(out);
  return 0;
}

int loom_hw_config_resolve(const char *name_or_path, struct loom_hw_config *out, char *msg,
                           size_t msg_size) {
  const struct loom_hw_config *named = loom_hw_config_by_name(name_or_path);
  if (named) {
    *out = *named;
    return 0;
  }
  /* A path, or a bare word that names no configuration but a file here. */
  if (strchr(name_or_path, '/') || strchr(name_or_path, '.') || access(name_or_path, F_OK) == 0)
    return loom_hw_config_load(name_or_path, out, msg, msg_size);
  char known[128];
  loom_hw_config_names(known, sizeof known);
  snprintf(msg, msg_size,
           "unknown hardware configuration '%s' (known: %s; or the path of a configuration file)",
           name_or_path, known);
  return 1;
}
