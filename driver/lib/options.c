/*
 * options.c - the "key=value,key=value" strings that configure a backend
 * ("config=tiny", "dev=/dev/loom0,timeout=100").
 *
 * Items are separated by commas; a key and its value by the first '='.
 * Spaces around keys and values are ignored, empty items are skipped, and a
 * value runs to the next comma (so values cannot contain commas).  When a key
 * repeats, the last one wins, as on a command line.  Backends call
 * loom_option_check() first so that a misspelt key is an error rather than
 * silently ignored.  loom_backend_config() reads the option every
 * simulator backend has, config=NAME|FILE.
 */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

/* One item of an option string: [key, key_end) and [val, val_end). */
struct option_item {
  const char *key, *key_end, *val, *val_end;
};

static const char *skip_spaces(const char *p, const char *end) {
  while (p < end && *p == ' ') p++;
  return p;
}

static const char *trim_end(const char *begin, const char *p) {
  while (p > begin && p[-1] == ' ') p--;
  return p;
}

/* Splits the item at *p (up to the next comma) and advances *p past it.
 * Returns 0 at the end of the string. */
static int next_item(const char **p, struct option_item *it) {
  const char *s = *p;
  while (*s == ',' || *s == ' ') s++;
  if (!*s) return 0;
  const char *end = strchr(s, ',');
  if (!end) end = s + strlen(s);
  const char *eq = memchr(s, '=', (size_t)(end - s));
  it->key = s;
  it->key_end = trim_end(s, eq ? eq : end);
  it->val = eq ? skip_spaces(eq + 1, end) : NULL;
  it->val_end = eq ? trim_end(it->val, end) : NULL;
  *p = end;
  return 1;
}

static int key_is(const struct option_item *it, const char *key) {
  size_t n = (size_t)(it->key_end - it->key);
  return strlen(key) == n && !memcmp(it->key, key, n);
}

int loom_option_get(const char *options, const char *key, char *out, size_t n) {
  struct option_item it;
  int found = 0;
  const char *p = options ? options : "";
  while (next_item(&p, &it)) {
    if (!it.val || !key_is(&it, key)) continue;
    size_t len = (size_t)(it.val_end - it.val);
    if (n > 0) {
      if (len >= n) len = n - 1;
      memcpy(out, it.val, len);
      out[len] = '\0';
    }
    found = 1;
  }
  return found;
}

/* A backend's own keys, or one every device takes (loom_device_option_keys). */
static int key_known(const struct option_item *it, const char *const known[]) {
  for (int i = 0; known && known[i]; i++)
    if (key_is(it, known[i])) return 1;
  for (int i = 0; loom_device_option_keys[i]; i++)
    if (key_is(it, loom_device_option_keys[i])) return 1;
  return 0;
}

/* "config, dev" from a NULL-terminated list, for messages. */
static void join_names(const char *const names[], char *out, size_t n) {
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; names && names[i] && len < n; i++)
    len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", names[i]);
  if (!out[0]) snprintf(out, n, "none");
}

loom_status loom_option_check(const char *options, const char *const known[], const char *who,
                              char msg[LOOM_MSG_MAX]) {
  struct option_item it;
  const char *p = options ? options : "";
  char list[128];
  while (next_item(&p, &it)) {
    int klen = (int)(it.key_end - it.key);
    if (!it.val || klen == 0)
      return loom_fail(msg, LOOM_E_INVALID, "%s: option '%.*s' is not of the form key=value",
                       who, (int)(strcspn(it.key, ",")), it.key);
    if (!key_known(&it, known)) {
      join_names(known, list, sizeof list);
      return loom_fail(msg, LOOM_E_INVALID, "%s: unknown option '%.*s' (known: %s)", who, klen,
                       it.key, list);
    }
  }
  return LOOM_OK;
}

loom_status loom_backend_config(const char *who, const char *options, struct loom_hw_config *c,
                                char msg[LOOM_MSG_MAX]) {
  char name[LOOM_MSG_MAX / 2] = "default", why[LOOM_MSG_MAX], list[128];
  loom_option_get(options, "config", name, sizeof name);
  int rc = loom_hw_config_resolve(name, c, why, sizeof why);
  if (rc == 0) return LOOM_OK;
  if (rc < 0) return loom_fail(msg, LOOM_E_INVALID, "%s: config: %s", who, why);
  loom_hw_config_names(list, sizeof list);
  return loom_fail(msg, LOOM_E_NOTFOUND, "%s: unknown config '%s' (known: %s, or a configuration file)",
                   who, name, list);
}

loom_status loom_backend_hw_config(const char *who, const char *where, uint32_t hash,
                                   const char *options, struct loom_hw_config *c,
                                   char msg[LOOM_MSG_MAX]) {
  char name[8];
  const struct loom_hw_config *named = loom_hw_config_by_hash(hash);
  if (!loom_option_get(options, "config", name, sizeof name)) {
    if (named) {
      *c = *named;
      return LOOM_OK;
    }
    return loom_fail(msg, LOOM_E_CONFIG,
                     "%s: %s implements a hardware config Loom has no name for (0x%08X): pass "
                     "config=FILE, the configuration file it was built from",
                     who, where, hash);
  }
  loom_status st = loom_backend_config(who, options, c, msg);
  if (st != LOOM_OK || c->hash == hash) return st;
  if (named)
    return loom_fail(msg, LOOM_E_CONFIG, "%s: %s implements config '%s' (0x%08X), not '%s' (0x%08X)",
                     who, where, named->name, hash, c->name, c->hash);
  return loom_fail(msg, LOOM_E_CONFIG, "%s: %s implements config 0x%08X, not '%s' (0x%08X)", who,
                   where, hash, c->name, c->hash);
}
