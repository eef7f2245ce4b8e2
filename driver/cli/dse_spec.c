/*
 * dse_spec.c - the sweep file of `loom dse` and the points it spans.
 *
 *   # kv260.toml
 *   part = "xck26-sfvc784-2LV-c"
 *   networks = ["build/models/resnet18.onnx", "build/models/mobilenetv2.onnx"]
 *   calib = "build/models/calib_imagenet"  # or one per network, in order
 *   base = "large"                  # configuration the sweep starts from
 *
 *   [sweep]
 *   block_in = [16, 32, 64]
 *   block_out = "16..64"            # doubling: 16, 32, 64
 *   wgt_kib = [256, 512]
 *   clock_mhz = 200                 # one value: set, not swept
 *
 * One reader takes both spellings: TOML's (sections, quoted strings,
 * [lists], lists over several lines) and plain text (`block_in = 16, 32`,
 * unquoted words).  Sections only group; every key has one meaning:
 *
 *   part, networks, calib, base, out, dram_bytes_per_cycle, synth
 *   and any configuration key but `name` (batch ... max_outstanding_reads)
 *
 * A configuration key takes an integer, a list of them, a range "a..b"
 * (a, 2a, 4a ... up to b) or "a..b+s" (a, a+s, ... up to b), or the name
 * of another configuration key, whose value it then takes in every point
 * (block_out = "block_in": square arrays only, which is all the compiler
 * lowers today).  Paths are
 * taken relative to the directory loom runs in and stored absolute, so the
 * tasks of a Slurm array, which may start elsewhere, read the same files.
 *
 * The points are the Cartesian product of the swept keys over the base
 * configuration, in spec order with the last key varying fastest.  A point
 * that breaks a rule (hwconfig_rules.c) stays in the list as invalid, but
 * a value that breaks a rule in every point that has it is a mistake in
 * the spec, and so is a sweep with no valid point: both are errors.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cli.h"
#include "driver/core/readfile.h"
#include "dse.h"
#include "loom/loom.h"

#define SPEC_MAX_BYTES (1u << 20)
#define ITEM_MAX 64

const char *const dse_key_names[DSE_KEY_COUNT] = {
#define AS_NAME(key, lo, hi, what) #key,
    LOOM_HW_INT_KEYS(AS_NAME)
#undef AS_NAME
};

int *dse_key_field(struct loom_hw_config *c, int key) {
  switch (key) {
#define AS_FIELD(key, lo, hi, what) \
  case DSE_KEY_##key: return &c->key;
    LOOM_HW_INT_KEYS(AS_FIELD)
#undef AS_FIELD
  default: return NULL;
  }
}

static const int key_lo[DSE_KEY_COUNT] = {
#define AS_LO(key, lo, hi, what) lo,
    LOOM_HW_INT_KEYS(AS_LO)
#undef AS_LO
};
static const int key_hi[DSE_KEY_COUNT] = {
#define AS_HI(key, lo, hi, what) hi,
    LOOM_HW_INT_KEYS(AS_HI)
#undef AS_HI
};

/* The settings other than configuration keys. */
enum setting_id { SET_NETWORKS, SET_CALIB, SET_PART, SET_OUT, SET_BASE, SET_SYNTH, SET_DRAM, SET_COUNT };
static const char *const setting_names[SET_COUNT] = {"networks", "calib", "part", "out", "base", "synth",
                                                     "dram_bytes_per_cycle"};

struct reader {
  const char *path;
  int line;
  struct dse_spec *s;
  char part[LOOM_HW_PART_MAX];
  char out[DSE_PATH_MAX];
  char (*items)[DSE_PATH_MAX]; /* the values of the key being read */
  char calib[DSE_MAX_NETS][DSE_PATH_MAX];
  int n_calib;
  int seen[SET_COUNT];         /* line of each setting, 0 unseen */
  char *value;                 /* a value, joined over lines */
};

#define VALUE_MAX (64 * 1024)

__attribute__((format(printf, 2, 3))) static int bad(struct reader *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (r->line) fprintf(stderr, "loom: %s:%d: ", r->path, r->line);
  else fprintf(stderr, "loom: %s: ", r->path);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return -1;
}

/* ---- values ---- */

/* Splits a value into items: [a, b], a, b or a b; quotes are removed. */
static int split_items(struct reader *r, const char *key, char *v, char items[][DSE_PATH_MAX],
                       int max, int *n) {
  size_t len = strlen(v);
  if (len && v[0] == '[') {
    if (v[len - 1] != ']') return bad(r, "key '%s': a list must end with ']'", key);
    v[len - 1] = '\0', v++;
  }
  *n = 0;
  for (char *p = v;;) {
    while (*p == ',' || isspace((unsigned char)*p)) p++;
    if (!*p) return 0;
    char *start = p, *end;
    if (*p == '"') {
      start = ++p;
      if (!(end = strchr(p, '"'))) return bad(r, "key '%s': unterminated string", key);
      p = end + 1;
    } else {
      while (*p && *p != ',' && !isspace((unsigned char)*p)) p++;
      end = p;
    }
    if (*n == max) return bad(r, "key '%s': more than %d values", key, max);
    if ((size_t)(end - start) >= DSE_PATH_MAX) return bad(r, "key '%s': value too long", key);
    memcpy(items[*n], start, (size_t)(end - start));
    items[(*n)++][end - start] = '\0';
  }
}

static int parse_int(const char *t, long *v) {
  char *end;
  errno = 0;
  *v = strtol(t, &end, 10);
  return isdigit((unsigned char)t[0]) && !*end && !errno;
}

/* "a..b" (doubling) or "a..b+s" into the axis. */
static int add_range(struct reader *r, int key, const char *t, struct dse_axis *a) {
  long lo, hi, step = 0;
  char buf[ITEM_MAX + 1], *dots, *plus;
  snprintf(buf, sizeof buf, "%s", t);
  dots = strstr(buf, "..");
  *dots = '\0';
  plus = strchr(dots + 2, '+');
  if (plus) *plus = '\0';
  if (!parse_int(buf, &lo) || !parse_int(dots + 2, &hi) || (plus && (!parse_int(plus + 1, &step) || step < 1)) ||
      lo < 1 || hi < lo)
    return bad(r, "key '%s': range '%s' is not a..b or a..b+step with 1 <= a <= b", dse_key_names[key], t);
  for (long x = lo; x <= hi; x = step ? x + step : 2 * x) {
    if (a->n == DSE_MAX_VALUES) return bad(r, "key '%s': range '%s' has more than %d values", dse_key_names[key], t, DSE_MAX_VALUES);
    a->v[a->n++] = (int)x;
  }
  return 0;
}

static int find_key(const char *name) {
  for (int k = 0; k < DSE_KEY_COUNT; k++)
    if (!strcmp(name, dse_key_names[k])) return k;
  return -1;
}

/* key = "other": key takes other's value in every point. */
static int tie_key(struct reader *r, int key, int other) {
  struct dse_spec *s = r->s;
  if (other == key) return bad(r, "key '%s' cannot follow itself", dse_key_names[key]);
  if (s->tie[other] >= 0)
    return bad(r, "key '%s' follows '%s', which itself follows '%s'", dse_key_names[key], dse_key_names[other],
               dse_key_names[s->tie[other]]);
  for (int k = 0; k < DSE_KEY_COUNT; k++)
    if (s->tie[k] == key) return bad(r, "key '%s' is followed by '%s' and cannot follow another", dse_key_names[key], dse_key_names[k]);
  s->tie[key] = other;
  return 0;
}

static int config_key(struct reader *r, int key, char items[][DSE_PATH_MAX], int n) {
  struct dse_axis *a = NULL;
  if (r->s->tie[key] >= 0) return bad(r, "key '%s' repeats", dse_key_names[key]);
  for (int i = 0; i < r->s->n_axes; i++)
    if (r->s->axes[i].key == key) return bad(r, "key '%s' repeats line %d", dse_key_names[key], r->s->axes[i].line);
  if (n == 1 && find_key(items[0]) >= 0) return tie_key(r, key, find_key(items[0]));
  a = &r->s->axes[r->s->n_axes++];
  *a = (struct dse_axis){.key = key, .line = r->line};
  if (n == 0) return bad(r, "key '%s': the list is empty (the sweep would have no point)", dse_key_names[key]);
  for (int i = 0; i < n; i++) {
    long v;
    if (strstr(items[i], "..")) {
      if (add_range(r, key, items[i], a)) return -1;
      continue;
    }
    if (!parse_int(items[i], &v) || v < key_lo[key] || v > key_hi[key])
      return bad(r, "key '%s': '%s' is not a whole number in %d..%d", dse_key_names[key], items[i], key_lo[key], key_hi[key]);
    if (a->n == DSE_MAX_VALUES) return bad(r, "key '%s': more than %d values", dse_key_names[key], DSE_MAX_VALUES);
    a->v[a->n++] = (int)v;
  }
  return 0;
}

/* A path as given, made absolute against the current directory. */
static int abs_path(struct reader *r, const char *key, const char *in, char *out, size_t n) {
  char cwd[DSE_PATH_MAX];
  if (in[0] == '/') return snprintf(out, n, "%s", in) < (int)n ? 0 : bad(r, "key '%s': path too long", key);
  if (!getcwd(cwd, sizeof cwd)) return bad(r, "cannot get the current directory: %s", strerror(errno));
  if (snprintf(out, n, "%s/%s", cwd, in) >= (int)n) return bad(r, "key '%s': path too long", key);
  return 0;
}

static int one_item(struct reader *r, const char *key, int n) {
  return n == 1 ? 0 : bad(r, "key '%s' takes one value, not %d", key, n);
}

static void net_name(const char *path, char *out, size_t n) {
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  size_t len = strcspn(base, ".");
  snprintf(out, n, "%.*s", (int)(len < n - 1 ? len : n - 1), base);
}

static int networks(struct reader *r, char items[][DSE_PATH_MAX], int n) {
  struct dse_spec *s = r->s;
  if (n == 0) return bad(r, "key 'networks': the list is empty");
  if (n > DSE_MAX_NETS) return bad(r, "key 'networks': at most %d networks", DSE_MAX_NETS);
  for (int i = 0; i < n; i++) {
    if (abs_path(r, "networks", items[i], s->nets[i].path, sizeof s->nets[i].path)) return -1;
    net_name(items[i], s->nets[i].name, sizeof s->nets[i].name);
    for (int j = 0; j < i; j++)
      if (!strcmp(s->nets[i].name, s->nets[j].name))
        return bad(r, "key 'networks': two networks named '%s'", s->nets[i].name);
  }
  s->n_nets = n;
  return 0;
}

static int calib(struct reader *r, char items[][DSE_PATH_MAX], int n) {
  if (n < 1 || n > DSE_MAX_NETS) return bad(r, "key 'calib' takes one directory, or one per network");
  for (int i = 0; i < n; i++)
    if (abs_path(r, "calib", items[i], r->calib[i], sizeof r->calib[i])) return -1;
  return r->n_calib = n, 0;
}

static int setting(struct reader *r, const char *key, char items[][DSE_PATH_MAX], int n) {
  struct dse_spec *s = r->s;
  long v;
  int id = 0;
  while (id < SET_COUNT && strcmp(key, setting_names[id])) id++;
  if (id == SET_COUNT)
    return bad(r, "unknown key '%s' (settings: part, networks, calib, base, out, dram_bytes_per_cycle, "
                  "synth; or a configuration key such as block_in)", key);
  if (r->seen[id]) return bad(r, "key '%s' repeats line %d", key, r->seen[id]);
  r->seen[id] = r->line;
  if (id == SET_NETWORKS) return networks(r, items, n);
  if (id == SET_CALIB) return calib(r, items, n);
  if (one_item(r, key, n)) return -1;
  switch (id) {
  case SET_PART:
    if (strlen(items[0]) >= sizeof r->part) return bad(r, "key 'part': '%s' is too long", items[0]);
    return snprintf(r->part, sizeof r->part, "%s", items[0]), 0;
  case SET_OUT: return snprintf(r->out, sizeof r->out, "%s", items[0]), 0;
  case SET_BASE: return snprintf(s->base, sizeof s->base, "%s", items[0]), 0;
  case SET_SYNTH:
    if (strcmp(items[0], "yosys") && strcmp(items[0], "estimate"))
      return bad(r, "key 'synth': '%s' is neither yosys nor estimate", items[0]);
    return s->synth = !strcmp(items[0], "yosys"), 0;
  default:
    if (!parse_int(items[0], &v) || v < 1 || v > 4096 || (v & (v - 1)))
      return bad(r, "key 'dram_bytes_per_cycle': '%s' is not a power of two in 1..4096", items[0]);
    return s->dram_bw = (int)v, 0;
  }
}

static int assign(struct reader *r, const char *key, char *value) {
  int n = 0;
  if (!strcmp(key, "name")) return bad(r, "key 'name': points are named for their keys; it cannot be set");
  if (split_items(r, key, value, r->items, DSE_MAX_VALUES, &n)) return -1;
  int k = find_key(key);
  return k >= 0 ? config_key(r, k, r->items, n) : setting(r, key, r->items, n);
}

/* ---- lines ---- */

static char *trim(char *p) {
  while (isspace((unsigned char)*p)) p++;
  char *e = p + strlen(p);
  while (e > p && isspace((unsigned char)e[-1])) *--e = '\0';
  return p;
}

/* Drops a `#` comment that is not inside a string. */
static void strip_comment(char *p) {
  int quoted = 0;
  for (; *p; p++) {
    if (*p == '"') quoted = !quoted;
    else if (*p == '#' && !quoted) {
      *p = '\0';
      return;
    }
  }
}

/* A list that opens with '[' may go on over the next lines until ']'. */
static int join_list(struct reader *r, char *value, size_t cap, char **next, char *end) {
  while (value[0] == '[' && !strchr(value, ']') && *next < end) {
    char *nl = memchr(*next, '\n', (size_t)(end - *next));
    char *line_end = nl ? nl : end;
    *line_end = '\0';
    r->line++;
    strip_comment(*next);
    if (strlen(value) + strlen(*next) + 2 >= cap) return bad(r, "list too long");
    strcat(value, " ");
    strcat(value, *next);
    *next = nl ? nl + 1 : end;
  }
  return 0;
}

static int parse_text(struct reader *r, char *text, size_t len) {
  char *value = r->value, *end = text + len;
  for (char *p = text; p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p)), *line = p;
    if (nl) *nl = '\0';
    p = nl ? nl + 1 : end;
    r->line++;
    strip_comment(line);
    line = trim(line);
    if (!*line) continue;
    if (line[0] == '[') {
      if (line[strlen(line) - 1] != ']') return bad(r, "'%s' is not a [section]", line);
      continue;
    }
    char *eq = strchr(line, '=');
    if (!eq) return bad(r, "'%s' is not of the form key = value", line);
    *eq = '\0';
    char *key = trim(line);
    snprintf(value, VALUE_MAX, "%s", trim(eq + 1));
    int first = r->line;
    if (join_list(r, value, VALUE_MAX, &p, end)) return -1;
    int last = r->line;
    r->line = first;
    if (!value[0]) return bad(r, "key '%s' has no value", key);
    if (assign(r, key, value)) return -1;
    r->line = last;
  }
  return 0;
}

/* ---- the spec ---- */

static int finish(struct reader *r) {
  struct dse_spec *s = r->s;
  char msg[LOOM_MSG_MAX];
  r->line = 0;
  if (!s->n_nets) return bad(r, "no networks (networks = [\"net.onnx\", ...])");
  for (int i = 0; i < s->n_nets; i++)
    if (access(s->nets[i].path, R_OK) != 0)
      return bad(r, "key 'networks': %s: %s", s->nets[i].path, strerror(errno));
  if (r->n_calib > 1 && r->n_calib != s->n_nets)
    return bad(r, "key 'calib': %d directories for %d networks (give one, or one per network)", r->n_calib, s->n_nets);
  for (int i = 0; i < r->n_calib; i++)
    if (access(r->calib[i], R_OK) != 0) return bad(r, "key 'calib': %s: %s", r->calib[i], strerror(errno));
  for (int i = 0; i < s->n_nets && r->n_calib; i++)
    snprintf(s->nets[i].calib, sizeof s->nets[i].calib, "%s", r->calib[r->n_calib > 1 ? i : 0]);
  if (loom_hw_config_resolve(s->base, &s->base_cfg, msg, sizeof msg)) return bad(r, "key 'base': %s", msg);
  if (!r->part[0]) snprintf(r->part, sizeof r->part, "%s", s->base_cfg.part);
  if (!(s->part = loom_hw_part_by_name(r->part)))
    return bad(r, "key 'part': unknown part '%s' (see docs/boards.md, \"Part capacities\")", r->part);
  snprintf(s->base_cfg.part, sizeof s->base_cfg.part, "%s", s->part->name);
  if (r->out[0]) snprintf(s->out, sizeof s->out, "%s", r->out);
  return 0;
}

/* crc32 of a file's bytes (0 when it cannot be read). */
static uint32_t crc_file(const char *path) {
  char msg[LOOM_MSG_MAX];
  uint8_t *data;
  size_t size;
  if (loom_read_file(path, UINT64_C(1) << 32, &data, &size, msg) != LOOM_OK) return 0;
  uint32_t c = (uint32_t)crc32(0L, data, (uInt)size);
  free(data);
  return c;
}

/* The calibration inputs as names, sizes and times (a file or a directory
 * of .npy files, as calib.c reads them): a cheap stand-in for their bytes. */
static uint32_t crc_calib(const char *path) {
  struct stat st;
  char entry[DSE_PATH_MAX + 300];
  uLong c = crc32(0L, (const Bytef *)path, (uInt)strlen(path));
  DIR *d = opendir(path);
  if (!d) return stat(path, &st) == 0 ? (uint32_t)(c ^ (uLong)st.st_size ^ (uLong)st.st_mtime) : 0;
  for (struct dirent *e; (e = readdir(d));) {
    snprintf(entry, sizeof entry, "%s/%s", path, e->d_name);
    if (e->d_name[0] == '.' || stat(entry, &st) != 0) continue;
    /* order-independent: readdir's order is the file system's */
    c ^= crc32(0L, (const Bytef *)e->d_name, (uInt)strlen(e->d_name)) + (uLong)st.st_size * 31u +
         (uLong)st.st_mtime;
  }
  closedir(d);
  return (uint32_t)c;
}

/* What every result depends on besides its configuration: the loom that
 * computes it, the networks, the calibration inputs and the settings. */
static void digest(struct dse_spec *s) {
  char text[DSE_PATH_MAX * (2 * DSE_MAX_NETS + 1) + 512];
  size_t n = (size_t)snprintf(text, sizeof text, "loom=%08X;part=%s;dram=%d;synth=%d;",
                              crc_file("/proc/self/exe"), s->part->name, s->dram_bw, s->synth);
  for (int i = 0; i < s->n_nets && n < sizeof text; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "net=%s:%08X:%s:%08X;", s->nets[i].path,
                          crc_file(s->nets[i].path), s->nets[i].calib,
                          s->nets[i].calib[0] ? crc_calib(s->nets[i].calib) : 0u);
  s->digest = (uint32_t)crc32(0L, (const Bytef *)text, (uInt)strlen(text));
}

/* SPEC.toml -> SPEC.dse (beside it). */
static void default_out(const char *spec, char *out, size_t n) {
  const char *dot = strrchr(spec, '.'), *slash = strrchr(spec, '/');
  size_t len = dot && (!slash || dot > slash) ? (size_t)(dot - spec) : strlen(spec);
  snprintf(out, n, "%.*s.dse", (int)(len < n - 5 ? len : n - 5), spec);
}

int dse_spec_read(const char *path, const char *out_override, struct dse_spec *s) {
  struct reader r = {.path = path, .s = s};
  char msg[LOOM_MSG_MAX];
  uint8_t *text;
  size_t size;
  memset(s, 0, sizeof *s);
  snprintf(s->path, sizeof s->path, "%s", path);
  snprintf(s->base, sizeof s->base, "default");
  s->synth = 1;
  for (int k = 0; k < DSE_KEY_COUNT; k++) s->tie[k] = -1;
  default_out(path, s->out, sizeof s->out);
  if (loom_read_file(path, SPEC_MAX_BYTES, &text, &size, msg) != LOOM_OK) return cli_error("%s", msg), -1;
  r.items = malloc(DSE_MAX_VALUES * sizeof *r.items);
  r.value = malloc(VALUE_MAX);
  int rc = !r.items || !r.value ? cli_error("out of memory")
           : memchr(text, '\0', size) ? bad(&r, "not a text file")
                                      : parse_text(&r, (char *)text, size);
  free(text);
  free(r.items);
  free(r.value);
  if (rc || finish(&r)) return -1;
  if (out_override) snprintf(s->out, sizeof s->out, "%s", out_override);
  digest(s);
  return 0;
}

/* ---- points ---- */

/* The keys that change the hardware (all but the clock) and the part. */
void dse_point_name(const struct loom_hw_config *c, char name[LOOM_HW_NAME_MAX]) {
  char text[256];
  size_t n = 0;
  struct loom_hw_config k = *c;
  for (int i = 0; i < DSE_KEY_COUNT; i++)
    if (i != DSE_KEY_clock_mhz) n += (size_t)snprintf(text + n, sizeof text - n, "%d,", *dse_key_field(&k, i));
  for (int i = 0; i < LOOM_CONFIG_COUNT; i++) {
    struct loom_hw_config named = loom_hw_configs[i];
    char other[256];
    size_t m = 0;
    for (int j = 0; j < DSE_KEY_COUNT; j++)
      if (j != DSE_KEY_clock_mhz) m += (size_t)snprintf(other + m, sizeof other - m, "%d,", *dse_key_field(&named, j));
    if (!strcmp(text, other)) {
      snprintf(name, LOOM_HW_NAME_MAX, "%s", named.name);
      return;
    }
  }
  snprintf(name, LOOM_HW_NAME_MAX, "dse_%08x", (unsigned)crc32(0L, (const Bytef *)text, (uInt)n));
}

static void make_point(const struct dse_spec *s, const int *idx, struct dse_point *p) {
  struct loom_hw_violation v[1];
  p->cfg = s->base_cfg;
  p->cfg.comment = NULL;
  for (int a = 0; a < s->n_axes; a++) *dse_key_field(&p->cfg, s->axes[a].key) = s->axes[a].v[idx[a]];
  for (int k = 0; k < DSE_KEY_COUNT; k++)
    if (s->tie[k] >= 0) *dse_key_field(&p->cfg, k) = *dse_key_field(&p->cfg, s->tie[k]);
  dse_point_name(&p->cfg, p->cfg.name);
  p->valid = loom_hw_check(&p->cfg, v, 1) == 0;
  if (p->valid) loom_hw_derive(&p->cfg);
  else p->bad_key = v[0].key, snprintf(p->why, sizeof p->why, "key '%.24s': %.150s", v[0].key, v[0].what);
}

/* A value none of whose points is valid, each for a rule of its own key. */
static int check_values(const struct dse_spec *s, const struct dse_point *pts, int n, const int *value_of) {
  for (int a = 0; a < s->n_axes; a++) {
    const struct dse_axis *ax = &s->axes[a];
    for (int v = 0; v < ax->n; v++) {
      int any_valid = 0, own = 0;
      const char *why = NULL;
      for (int i = 0; i < n; i++) {
        if (value_of[i * DSE_KEY_COUNT + a] != v) continue;
        any_valid |= pts[i].valid;
        if (!pts[i].valid && !strcmp(pts[i].bad_key, dse_key_names[ax->key])) own = 1, why = pts[i].why;
      }
      if (!any_valid && own) {
        fprintf(stderr, "loom: %s:%d: key '%s': %d breaks a rule in every point: %s\n", s->path,
                ax->line, dse_key_names[ax->key], ax->v[v], why);
        return -1;
      }
    }
  }
  return 0;
}

static int count_points(const struct dse_spec *s, long *total) {
  *total = 1;
  for (int a = 0; a < s->n_axes; a++)
    if ((*total *= s->axes[a].n) > DSE_MAX_POINTS) {
      fprintf(stderr, "loom: %s: the sweep has more than %d points\n", s->path, DSE_MAX_POINTS);
      return -1;
    }
  return 0;
}

int dse_points(const struct dse_spec *s, struct dse_point **out, int *n_out) {
  long total;
  if (count_points(s, &total)) return -1;
  struct dse_point *pts = calloc((size_t)total, sizeof *pts);
  int *value_of = calloc((size_t)total * DSE_KEY_COUNT, sizeof *value_of);
  int idx[DSE_KEY_COUNT] = {0}, n = 0, valid = 0;
  if (!pts || !value_of) return free(pts), free(value_of), cli_error("out of memory"), -1;
  for (long i = 0; i < total; i++) {
    long rest = i;
    for (int a = s->n_axes - 1; a >= 0; a--) idx[a] = (int)(rest % s->axes[a].n), rest /= s->axes[a].n;
    make_point(s, idx, &pts[n]);
    int dup = 0;
    for (int j = 0; j < n && !dup; j++) dup = !strcmp(pts[j].cfg.name, pts[n].cfg.name) && pts[j].cfg.clock_mhz == pts[n].cfg.clock_mhz;
    if (dup) continue;
    memcpy(&value_of[n * DSE_KEY_COUNT], idx, sizeof idx);
    valid += pts[n++].valid;
  }
  int rc = check_values(s, pts, n, value_of);
  free(value_of);
  if (!rc && !valid) {
    fprintf(stderr, "loom: %s: the sweep is empty: none of its %d points is a legal configuration (e.g. %s)\n",
            s->path, n, pts[0].why);
    rc = -1;
  }
  if (rc) return free(pts), -1;
  *out = pts;
  *n_out = n;
  return 0;
}
