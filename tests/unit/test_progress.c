/*
 * test_progress.c - progress of long runs: what libloom reports
 * (loom_model_set_progress) and how the display shows it
 * (driver/core/progress.c).
 *
 * The model: two jobs, the second a GEMM of 1024 x 768 micro-ops (786 k
 * units of fsim work, as many cycles on tsim), with JOBMETA records whose
 * cycle estimates weigh the steps 1 : 200 and give the long job's expected
 * length.  On fsim and tsim the callback must come at each step's start
 * (step, name, fraction of the weights before it), several times inside
 * the long job with fractions strictly between the step's bounds and
 * growing, and once at the end with 1.  The display: nothing when quiet,
 * nothing for a run shorter than the delay, periodic lines with the
 * percentage, the label and an estimate of the time left on a file, and on
 * a terminal (a pseudo-terminal here) a bar redrawn in place and cleared at
 * the end.  tests/cli/test_progress.sh checks the commands.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver/core/asm.h"
#include "driver/core/progress.h"
#include "loom/loom.h"

static const char program[] =
    ".config tiny\n"
    ".buffer a work 64\n"
    ".buffer c work 64\n"
    ".buffer uops const\n"
    "  .uop acc=0 inp=0 wgt=0\n"
    ".tensor A input a 0 i8 [8,8]\n"
    ".tensor C output c 0 i8 [8,8]\n"
    ".job short seg0=a seg2=c seg3=uops\n"
    "  load uop sram=0 seg=3 off=0 y=1 x=1 stride=1\n"
    "  load inp sram=0 seg=0 off=0 y=1 x=8 stride=8 push_next\n"
    "  gemm reset uop=0:1 iter=1,1 pop_prev\n"
    "  nop compute push_next\n"
    "  store sram=0 seg=2 off=0 y=1 x=8 stride=8 pop_prev\n"
    "  finish\n"
    ".job long seg0=a seg2=c seg3=uops\n"
    "  load uop sram=0 seg=3 off=0 y=1 x=1 stride=1\n"
    "  load inp sram=0 seg=0 off=0 y=1 x=8 stride=8 push_next\n"
    "  gemm reset uop=0:1 iter=1,1 pop_prev\n"
    "  gemm uop=0:1 iter=1024,768\n"
    "  nop compute push_next\n"
    "  store sram=0 seg=2 off=0 y=1 x=8 stride=8 pop_prev\n"
    "  finish\n";

static uint8_t *long_model(size_t *n) {
  struct loom_file_builder *b;
  char msg[LOOM_MSG_MAX];
  if (loom_asm_string(program, sizeof program - 1, "long.s", NULL, &b, msg)) fail_msg("%s", msg);
  struct loom_file_jobmeta m0 = {.name = loom_fb_string(b, "first"), .op = loom_fb_string(b, "gemm"), .est_cycles = 4000};
  struct loom_file_jobmeta m1 = {.name = loom_fb_string(b, "second"), .op = loom_fb_string(b, "gemm"),
                                 .est_cycles = 800000};
  loom_fb_jobmeta(b, &m0);
  loom_fb_jobmeta(b, &m1);
  uint8_t *p = loom_file_builder_finish(b, n);
  loom_file_builder_free(b);
  assert_non_null(p);
  return p;
}

#define MAX_CALLS 4096

struct calls {
  int n;
  struct loom_run_progress p[MAX_CALLS];
  char names[MAX_CALLS][16];
};

static void record(void *ctx, const struct loom_run_progress *p) {
  struct calls *c = ctx;
  if (c->n == MAX_CALLS) return;
  c->p[c->n] = *p;
  snprintf(c->names[c->n], sizeof c->names[0], "%s", p->name);
  c->n++;
}

static void check_calls(const struct calls *c, const char *backend) {
  double w0 = 4000.0 / 804000.0; /* the first job's share */
  print_message("%s: %d progress calls\n", backend, c->n);
  assert_true(c->n >= 5);
  assert_int_equal(c->p[0].step, 0);
  assert_int_equal(c->p[0].steps, 2);
  assert_string_equal(c->names[0], "first");
  assert_true(c->p[0].fraction == 0);
  int second = -1, inside = 0;
  for (int i = 1; i < c->n; i++) {
    assert_true(c->p[i].fraction >= c->p[i - 1].fraction); /* never backwards */
    if (c->p[i].step == 1 && second < 0) {
      second = i;
      assert_string_equal(c->names[i], "second");
      assert_true(c->p[i].fraction > w0 * 0.999 && c->p[i].fraction < w0 * 1.001);
    } else if (c->p[i].step == 1) {
      inside++;
      assert_true(c->p[i].fraction > w0 && c->p[i].fraction < 1);
    }
  }
  assert_true(second > 0);
  assert_true(inside >= 2); /* reports from inside the long job */
  assert_int_equal(c->p[c->n - 1].step, 2);
  assert_true(c->p[c->n - 1].fraction == 1);
}

static void run_on(const char *backend, const char *options, struct calls *c) {
  size_t n;
  uint8_t *p = long_model(&n);
  loom_device *dev;
  loom_model *m;
  char msg[LOOM_MSG_MAX];
  int8_t a[64] = {0}, out[64];
  int64_t dims[2] = {8, 8};
  if (loom_device_open(backend, options, &dev, msg)) {
    print_message("skipped: %s\n", msg);
    free(p);
    skip();
  }
  if (loom_model_load_memory(dev, p, n, "long.loom", &m, msg)) fail_msg("%s", msg);
  loom_model_set_progress(m, record, c);
  assert_int_equal(loom_model_set_input(m, "A", LOOM_DT_I8, 2, dims, a), LOOM_OK);
  assert_int_equal(loom_model_run(m, 0), LOOM_OK);
  assert_int_equal(loom_model_get_output(m, "C", out, sizeof out), LOOM_OK);
  int before = c->n;
  loom_model_set_progress(m, NULL, NULL); /* stops */
  assert_int_equal(loom_model_run(m, 0), LOOM_OK);
  assert_int_equal(c->n, before);
  loom_model_free(m);
  loom_device_close(dev);
  free(p);
}

static void test_fsim_reports(void **state) {
  struct calls *c = calloc(1, sizeof *c);
  run_on("fsim", "config=tiny", c);
  check_calls(c, "fsim");
  free(c);
}

static void test_tsim_reports(void **state) {
  struct calls *c = calloc(1, sizeof *c);
  run_on("tsim", "config=tiny", c);
  check_calls(c, "tsim");
  free(c);
}

/* ---- the display ---- */

static char *read_all(FILE *f) {
  static char buf[16384];
  fflush(f);
  rewind(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  return buf;
}

static void feed(struct loom_progress *p, int steps) {
  for (int i = 0; i <= steps; i++) {
    loom_progress_update(p, (double)i / steps, "step 3/7 conv2");
    usleep(20000);
  }
}

static void test_display_quiet_and_short(void **state) {
  FILE *f = tmpfile();
  unsetenv("LOOM_PROGRESS_DELAY");
  struct loom_progress *p = loom_progress_start(f, "loom run", 1);
  assert_null(p); /* quiet */
  feed(p, 3);
  loom_progress_finish(p);
  p = loom_progress_start(f, "loom run", 0); /* a run shorter than the 2 s delay */
  feed(p, 5);
  loom_progress_finish(p);
  assert_string_equal(read_all(f), "");
  fclose(f);
}

static void test_display_lines(void **state) {
  FILE *f = tmpfile();
  setenv("LOOM_PROGRESS_DELAY", "0", 1);
  setenv("LOOM_PROGRESS_PERIOD", "0.05", 1);
  struct loom_progress *p = loom_progress_start(f, "loom run", 0);
  feed(p, 60);
  loom_progress_finish(p);
  const char *out = read_all(f);
  print_message("%.200s...\n", out);
  assert_non_null(strstr(out, "loom run: 0%, step 3/7 conv2, 0:00 elapsed\n"));
  assert_non_null(strstr(out, "left\n")); /* an estimate of the time left */
  assert_non_null(strstr(out, "loom run: done in "));
  assert_null(strchr(out, '\r'));
  int lines = 0;
  for (const char *s = out; *s; s++) lines += *s == '\n';
  assert_true(lines >= 5 && lines <= 40); /* periodic, not every update */
  fclose(f);
  unsetenv("LOOM_PROGRESS_DELAY");
  unsetenv("LOOM_PROGRESS_PERIOD");
}

static void test_display_terminal(void **state) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  assert_true(master >= 0);
  assert_int_equal(grantpt(master), 0);
  assert_int_equal(unlockpt(master), 0);
  FILE *term = fopen(ptsname(master), "w");
  assert_non_null(term);
  setenv("LOOM_PROGRESS_DELAY", "0", 1);
  struct loom_progress *p = loom_progress_start(term, "loom eval", 0);
  feed(p, 30);
  loom_progress_finish(p);
  fclose(term);
  char buf[16384];
  ssize_t n = 0, k;
  fcntl(master, F_SETFL, O_NONBLOCK);
  while (n < (ssize_t)sizeof buf - 1 && (k = read(master, buf + n, sizeof buf - 1 - (size_t)n)) > 0) n += k;
  buf[n > 0 ? n : 0] = 0;
  close(master);
  unsetenv("LOOM_PROGRESS_DELAY");
  assert_non_null(strstr(buf, "\r\033[Kloom eval: [")); /* redrawn in place */
  int draws = 0;
  for (const char *s = buf; (s = strstr(s, "\r\033[Kloom eval: [")); s++) draws++;
  assert_true(draws >= 3);
  assert_non_null(strstr(buf, "%  step 3/7 conv2"));
  assert_non_null(strstr(buf, "step 3/7 conv2"));
  assert_null(strchr(buf, '\n'));
  size_t len = strlen(buf);
  assert_true(len >= 4 && !strcmp(buf + len - 4, "\r\033[K")); /* cleared at the end */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fsim_reports),
      cmocka_unit_test(test_tsim_reports),
      cmocka_unit_test(test_display_quiet_and_short),
      cmocka_unit_test(test_display_lines),
      cmocka_unit_test(test_display_terminal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
