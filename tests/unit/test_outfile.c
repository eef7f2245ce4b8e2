/*
 * test_outfile.c - driver/core/outfile.c, the one writer of every file Loom
 * writes: a regular target is replaced atomically (new bytes or the old
 * file, never a mix; the mode kept; a symlink followed), a failed or
 * abandoned write leaves the target and no temporary file behind, a device
 * is written in place and never removed, and an output that is an input is
 * refused.  tests/cli/test_outputs.sh checks the same through every command
 * that writes, on a full tmpfs too.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver/core/outfile.h"

struct dir {
  char path[64];
};

static int setup(void **state) {
  struct dir *d = calloc(1, sizeof *d);
  snprintf(d->path, sizeof d->path, "/tmp/loom-outfile-XXXXXX");
  assert_non_null(mkdtemp(d->path));
  *state = d;
  return 0;
}

static int teardown(void **state) {
  struct dir *d = *state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", d->path);
  assert_int_equal(system(cmd), 0);
  free(d);
  return 0;
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static char *get(const char *path) {
  static char buf[256];
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

/* Entries of the directory besides "." and "..". */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

static void test_new_file(void **state) {
  struct dir *d = *state;
  char path[128], msg[LOOM_MSG_MAX];
  snprintf(path, sizeof path, "%s/new.txt", d->path);
  assert_int_equal(loom_outfile_write(path, "hello\n", 6, msg), LOOM_OK);
  assert_string_equal(get(path), "hello\n");
  mode_t mask = umask(022);
  umask(mask);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
  assert_int_equal(entries(d->path), 1);
}

static void test_replace_keeps_mode(void **state) {
  struct dir *d = *state;
  char path[128], msg[LOOM_MSG_MAX];
  snprintf(path, sizeof path, "%s/old.txt", d->path);
  put(path, "old\n");
  assert_int_equal(chmod(path, 0640), 0);
  struct stat before, after;
  assert_int_equal(stat(path, &before), 0);
  assert_int_equal(loom_outfile_write(path, "new\n", 4, msg), LOOM_OK);
  assert_int_equal(stat(path, &after), 0);
  assert_string_equal(get(path), "new\n");
  assert_int_equal(after.st_mode & 07777, 0640);
  assert_true(after.st_ino != before.st_ino); /* a new file renamed into place */
  assert_int_equal(entries(d->path), 1);
}

/* Until commit the target holds the old bytes; abort keeps them. */
static void test_abort_keeps_target(void **state) {
  struct dir *d = *state;
  char path[128], msg[LOOM_MSG_MAX];
  snprintf(path, sizeof path, "%s/keep.txt", d->path);
  put(path, "old\n");
  struct loom_outfile *o;
  assert_int_equal(loom_outfile_open(path, &o, msg), LOOM_OK);
  fputs("half a new fi", loom_outfile_stream(o));
  fflush(loom_outfile_stream(o));
  assert_string_equal(get(path), "old\n");
  assert_int_equal(entries(d->path), 2); /* the target and the temporary file */
  loom_outfile_abort(o);
  assert_string_equal(get(path), "old\n");
  assert_int_equal(entries(d->path), 1);
}

static void test_symlink_followed(void **state) {
  struct dir *d = *state;
  char real[128], link[128], msg[LOOM_MSG_MAX];
  snprintf(real, sizeof real, "%s/real.txt", d->path);
  snprintf(link, sizeof link, "%s/link.txt", d->path);
  put(real, "old\n");
  assert_int_equal(symlink("real.txt", link), 0);
  assert_int_equal(loom_outfile_write(link, "new\n", 4, msg), LOOM_OK);
  struct stat st;
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  assert_string_equal(get(real), "new\n");
}

/* A private /dev/full: the write fails with the errno text, the node stays. */
static void test_device_in_place(void **state) {
  struct dir *d = *state;
  char path[128], msg[LOOM_MSG_MAX];
  snprintf(path, sizeof path, "%s/full", d->path);
  if (mknod(path, S_IFCHR | 0666, makedev(1, 7))) {
    print_message("skipped: mknod needs root (%s)\n", strerror(errno));
    skip();
  }
  char big[65536];
  memset(big, 'x', sizeof big);
  assert_int_equal(loom_outfile_write(path, big, sizeof big, msg), LOOM_E_IO);
  char want[256];
  snprintf(want, sizeof want, "%s: write failed: %s", path, strerror(ENOSPC));
  assert_string_equal(msg, want);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_true(S_ISCHR(st.st_mode));
  assert_int_equal(entries(d->path), 1);
  assert_int_equal(loom_outfile_write("/dev/null", big, sizeof big, msg), LOOM_OK);
  assert_int_equal(stat("/dev/null", &st), 0);
  assert_true(S_ISCHR(st.st_mode));
}

static void test_missing_directory(void **state) {
  struct dir *d = *state;
  char path[128], msg[LOOM_MSG_MAX], want[256];
  snprintf(path, sizeof path, "%s/no/such.txt", d->path);
  assert_int_equal(loom_outfile_write(path, "x", 1, msg), LOOM_E_IO);
  snprintf(want, sizeof want, "%s: cannot create a temporary file beside it: %s", path, strerror(ENOENT));
  assert_string_equal(msg, want);
}

static void test_output_is_input(void **state) {
  struct dir *d = *state;
  char in[128], hard[128], other[128], msg[LOOM_MSG_MAX];
  snprintf(in, sizeof in, "%s/in.txt", d->path);
  snprintf(hard, sizeof hard, "%s/hard.txt", d->path);
  snprintf(other, sizeof other, "%s/other.txt", d->path);
  put(in, "in\n");
  assert_int_equal(link(in, hard), 0);
  const char *inputs[] = {"/nonexistent", in, NULL};
  assert_int_equal(loom_outfile_check(in, inputs, msg), LOOM_E_INVALID);
  assert_non_null(strstr(msg, "the output is the input"));
  assert_int_equal(loom_outfile_check(hard, inputs, msg), LOOM_E_INVALID);
  assert_int_equal(loom_outfile_check(other, inputs, msg), LOOM_OK); /* does not exist yet */
  const char *devnull[] = {"/dev/null", NULL};
  assert_int_equal(loom_outfile_check("/dev/null", devnull, msg), LOOM_OK);
  assert_string_equal(get(in), "in\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_new_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_replace_keeps_mode, setup, teardown),
      cmocka_unit_test_setup_teardown(test_abort_keeps_target, setup, teardown),
      cmocka_unit_test_setup_teardown(test_symlink_followed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_device_in_place, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_directory, setup, teardown),
      cmocka_unit_test_setup_teardown(test_output_is_input, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
