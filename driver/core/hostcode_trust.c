/*
 * hostcode_trust.c - consent to run the native code of a .loom file: the
 * user's key, the SIGNATURE section made with it, and its check.
 *
 * Native host code is machine code; a .loom file comes from anywhere.  The
 * runtime therefore runs it only with the consent of the user who runs the
 * model: either the file was signed with that user's own key, which
 * `loom compile` does for every file it writes (so a model you compiled
 * runs natively, on any machine that has your key), or the user says
 * --trust-native (the library: the device option trust_native=1).  Without
 * either, the portable C host ops run instead, with the same results.
 *
 * The key is 32 random bytes from getrandom(), kept as 64 hex digits in
 * $LOOM_KEY_FILE, else $XDG_CONFIG_HOME/loom/key, else ~/.config/loom/key,
 * created on first use (by `loom compile`, never by the runtime) with mode
 * 0600 in a directory made 0700.  A key that another user owns, or that
 * others may read or write, is refused, as ssh refuses such a private key:
 * anyone who can read it can make files that run as you.  Creation is
 * race-free: the key is written to a temporary file and link()ed into
 * place, so two compilers starting at once agree on one key.
 *
 * The signature is HMAC-SHA256 (RFC 2104, FIPS 180-4) keyed with it, over
 * a domain string and the whole file with two fields taken as zero: the
 * crc32 (which covers the signature) and the mac itself.  Every byte the
 * runtime acts on is covered: the image, its entries, the steps and
 * tensors the code is specialized for; a changed file is a file nobody
 * consented to.  The record also names the key (8 bytes of an HMAC of a
 * fixed string), so `loom inspect` can tell "signed by another key" from
 * "changed after signing".  HMAC comes from libcrypto (OpenSSL 3, Debian's
 * libssl-dev; on every board's distribution), compared in constant time.
 * docs/hostcode.md says why an HMAC and not a public-key signature: the
 * consent is the user's own, for files they compiled or copied themselves.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core.h"
#include "hostcode_format.h"

static const char *const sig_state_names[LOOM_SIG_COUNT] = {
    [LOOM_SIG_NONE] = "not signed",
    [LOOM_SIG_MINE] = "signed with your key",
    [LOOM_SIG_OTHER_KEY] = "signed with another key",
    [LOOM_SIG_CHANGED] = "changed after it was signed with your key",
};
_Static_assert(sizeof sig_state_names / sizeof sig_state_names[0] == LOOM_SIG_COUNT, "a name per state");

const char *loom_sig_state_name(enum loom_sig_state s) {
  return (unsigned)s < LOOM_SIG_COUNT ? sig_state_names[s] : "?";
}

/* ---- HMAC-SHA256 ---- */

int loom_hmac_sha256(const uint8_t *key, size_t key_len, const struct loom_span *parts, int n,
                     uint8_t out[32]) {
  EVP_MAC *mac = EVP_MAC_fetch(NULL, OSSL_MAC_NAME_HMAC, NULL);
  EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
                         OSSL_PARAM_construct_end()};
  size_t len = 0;
  int ok = ctx && EVP_MAC_init(ctx, key, key_len, params);
  for (int i = 0; ok && i < n; i++) ok = parts[i].n == 0 || EVP_MAC_update(ctx, parts[i].p, parts[i].n);
  ok = ok && EVP_MAC_final(ctx, out, &len, 32) && len == 32;
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  return ok ? 0 : -1;
}

/* ---- the key ---- */

loom_status loom_key_path(char *out, size_t n, char msg[LOOM_MSG_MAX]) {
  const char *file = getenv("LOOM_KEY_FILE"), *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
  if (file && *file) return snprintf(out, n, "%s", file) < (int)n ? LOOM_OK : loom_fail(msg, LOOM_E_INVALID, "LOOM_KEY_FILE is too long");
  if (xdg && xdg[0] == '/') return snprintf(out, n, "%s/loom/key", xdg) < (int)n ? LOOM_OK : loom_fail(msg, LOOM_E_INVALID, "XDG_CONFIG_HOME is too long");
  if (!home || !*home) {
    struct passwd *pw = getpwuid(geteuid());
    home = pw ? pw->pw_dir : NULL;
  }
  if (!home || !*home) return loom_fail(msg, LOOM_E_NOTFOUND, "no home directory for the signing key (set LOOM_KEY_FILE)");
  return snprintf(out, n, "%s/.config/loom/key", home) < (int)n ? LOOM_OK : loom_fail(msg, LOOM_E_INVALID, "HOME is too long");
}

static int hex(int c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; }

/* The key's id: the first 8 bytes of HMAC(key, "loom key id"). */
static void key_id(struct loom_key *k) {
  uint8_t mac[32];
  struct loom_span s = {"loom key id", 11};
  if (loom_hmac_sha256(k->bytes, sizeof k->bytes, &s, 1, mac)) memset(mac, 0, sizeof mac);
  memcpy(k->id, mac, sizeof k->id);
}

/* 64 hex digits, then only white space. */
static int parse_key(const char *text, size_t len, uint8_t out[LOOM_KEY_BYTES]) {
  if (len < 2 * LOOM_KEY_BYTES) return -1;
  for (int i = 0; i < LOOM_KEY_BYTES; i++) {
    int hi = hex(text[2 * i]), lo = hex(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return -1;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  for (size_t i = 2 * LOOM_KEY_BYTES; i < len; i++)
    if (!strchr(" \t\r\n", text[i])) return -1;
  return 0;
}

/* Reads an existing key; LOOM_E_NOTFOUND when there is none. */
static loom_status read_key(struct loom_key *k, char msg[LOOM_MSG_MAX]) {
  char text[160];
  struct stat st;
  int fd = open(k->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return loom_fail(msg, errno == ENOENT ? LOOM_E_NOTFOUND : LOOM_E_IO, "%s: cannot read the signing key: %s",
                     k->path, strerror(errno));
  ssize_t n = fstat(fd, &st) ? -1 : read(fd, text, sizeof text);
  close(fd);
  if (n < 0) return loom_fail(msg, LOOM_E_IO, "%s: cannot read the signing key: %s", k->path, strerror(errno));
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
    return loom_fail(msg, LOOM_E_INVALID, "%s: the signing key is not a file of your own: remove it and compile again", k->path);
  if (st.st_mode & 077)
    return loom_fail(msg, LOOM_E_INVALID, "%s: the signing key may be read or written by others (mode %04o): chmod 600 it",
                     k->path, (unsigned)(st.st_mode & 07777));
  if (parse_key(text, (size_t)n, k->bytes))
    return loom_fail(msg, LOOM_E_INVALID, "%s: not a Loom signing key (64 hex digits)", k->path);
  key_id(k);
  return LOOM_OK;
}

/* mkdir -p of the key's directory; the directories made are 0700. */
static int make_dirs(char *path) {
  for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
    *s = 0;
    int rc = mkdir(path, 0700);
    *s = '/';
    if (rc && errno != EEXIST) return -1;
  }
  return 0;
}

static int random_bytes(uint8_t *p, size_t n) {
  while (n) {
    ssize_t got = getrandom(p, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    p += got, n -= (size_t)got;
  }
  return 0;
}

/* Writes a new file holding `text`, mode 0600; 0 or an errno.  *made says
 * whether the file now exists (and is ours to remove). */
static int write_new(const char *path, const char *text, size_t len, int *made) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  *made = fd >= 0;
  if (fd < 0) return errno;
  errno = 0;
  int err = write(fd, text, len) == (ssize_t)len ? 0 : errno ? errno : EIO;
  if (!err && fsync(fd)) err = errno;
  if (close(fd) && !err) err = errno;
  return err;
}

/* A new key: written to a temporary file, then linked into place, so a
 * concurrent creator's key wins cleanly (EEXIST: read theirs). */
static loom_status create_key(struct loom_key *k, char msg[LOOM_MSG_MAX]) {
  char tmp[sizeof k->path + 32], text[2 * LOOM_KEY_BYTES + 1];
  uint32_t salt;
  if (make_dirs(k->path) || random_bytes(k->bytes, sizeof k->bytes) || random_bytes((uint8_t *)&salt, sizeof salt))
    return loom_fail(msg, LOOM_E_IO, "%s: cannot create the signing key: %s", k->path, strerror(errno));
  snprintf(tmp, sizeof tmp, "%s.%08x.tmp", k->path, salt);
  for (int i = 0; i < LOOM_KEY_BYTES; i++) snprintf(text + 2 * i, 3, "%02x", k->bytes[i]);
  text[2 * LOOM_KEY_BYTES] = '\n';
  int made, err = write_new(tmp, text, sizeof text, &made);
  if (!err && link(tmp, k->path) && errno != EEXIST) err = errno;
  if (made) unlink(tmp);
  if (err) return loom_fail(msg, LOOM_E_IO, "%s: cannot create the signing key: %s", k->path, strerror(err));
  return read_key(k, msg); /* ours, or the one a concurrent compiler linked first */
}

loom_status loom_key_load(int create, struct loom_key *k, char msg[LOOM_MSG_MAX]) {
  memset(k, 0, sizeof *k);
  loom_status st = loom_key_path(k->path, sizeof k->path, msg);
  if (st == LOOM_OK) st = read_key(k, msg);
  if (st == LOOM_E_NOTFOUND && create && k->path[0]) st = create_key(k, msg);
  return st;
}

void loom_key_id_text(const uint8_t id[8], char out[17]) {
  for (int i = 0; i < 8; i++) snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* ---- signatures ---- */

/* The mac of a file whose SIGNATURE record starts at byte `sig`. */
static int file_mac(const struct loom_key *k, const uint8_t *p, size_t size, size_t sig, uint8_t out[32]) {
  static const uint8_t zero[32];
  size_t mac = sig + offsetof(struct loom_file_signature, mac);
  const struct loom_span parts[] = {
      {"loom signature 1", 17}, /* the domain, NUL included */
      {p, LOOM_FILE_OFF_CRC32},
      {zero, 4},
      {p + LOOM_FILE_OFF_CRC32 + 4, mac - LOOM_FILE_OFF_CRC32 - 4},
      {zero, 32},
      {p + mac + 32, size - mac - 32},
  };
  return loom_hmac_sha256(k->bytes, sizeof k->bytes, parts, 6, out);
}

static size_t sig_offset(const struct loom_file *f) {
  return (size_t)((const uint8_t *)f->signature - (const uint8_t *)f->storage);
}

enum loom_sig_state loom_file_signed_by(const struct loom_file *f, const struct loom_key *k) {
  uint8_t mac[32];
  if (!f->signature) return LOOM_SIG_NONE;
  if (!k || memcmp(f->signature->key_id, k->id, sizeof k->id)) return LOOM_SIG_OTHER_KEY;
  if (file_mac(k, f->storage, (size_t)f->file_size, sig_offset(f), mac)) return LOOM_SIG_CHANGED;
  return CRYPTO_memcmp(mac, f->signature->mac, sizeof mac) ? LOOM_SIG_CHANGED : LOOM_SIG_MINE;
}

/* The file's records again, its HOSTCODE included, with a SIGNATURE whose
 * mac is still zero. */
static uint8_t *with_signature_slot(const struct loom_file *f, const struct loom_key *k, size_t *size) {
  struct loom_file_builder *b = loom_file_builder_from(f);
  struct loom_file_signature s = {.algorithm = LOOM_SIGNATURE_HMAC_SHA256};
  if (!b) return NULL;
  memcpy(s.key_id, k->id, sizeof s.key_id);
  if (f->hostcode && loom_fb_hostcode(b, f->hostcode->triple, f->hostcode->cpu, f->hostcode_entries,
                                      f->hostcode->entry_count, f->hostcode_image, f->hostcode->image_size)) {
    loom_file_builder_free(b);
    return NULL;
  }
  loom_fb_signature(b, &s);
  uint8_t *p = loom_file_builder_finish(b, size);
  loom_file_builder_free(b);
  return p;
}

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

loom_status loom_file_sign(const uint8_t *in, size_t in_size, const char *name, const struct loom_key *k,
                           uint8_t **out, size_t *out_size, char msg[LOOM_MSG_MAX]) {
  struct loom_file f, g;
  uint8_t mac[32];
  *out = NULL;
  loom_status st = loom_file_parse(in, in_size, name, &f, msg);
  if (st != LOOM_OK) return st;
  size_t size = 0;
  uint8_t *p = with_signature_slot(&f, k, &size);
  loom_file_free(&f);
  if (!p) return loom_fail(msg, LOOM_E_NOMEM, "%s: out of memory signing the file", name);
  if ((st = loom_file_parse(p, size, name, &g, msg)) != LOOM_OK) return free(p), st;
  size_t sig = sig_offset(&g);
  loom_file_free(&g);
  if (file_mac(k, p, size, sig, mac)) return free(p), loom_fail(msg, LOOM_E_IO, "%s: HMAC-SHA256 failed (libcrypto)", name);
  memcpy(p + sig + offsetof(struct loom_file_signature, mac), mac, sizeof mac);
  put32(p + LOOM_FILE_OFF_CRC32, (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), p + LOOM_FILE_CRC_START,
                                                   (z_size_t)(size - LOOM_FILE_CRC_START)));
  *out = p;
  *out_size = size;
  return LOOM_OK;
}
