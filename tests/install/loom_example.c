/*
 * loom_example.c - a program as a user of an installed Loom writes it:
 * only <loom/loom.h> and <loom/isa.h>, built with `pkg-config --cflags --libs loom`
 * (tests/install/test_install.sh builds and runs it against a fresh
 * `make install`).
 *
 *   loom_example MODEL.loom BACKEND INPUT.f32 OUTPUT.bin
 *
 * Loads the model on BACKEND, sets its first input from raw float32 data
 * (the input's shape), runs it, writes its first output raw in the
 * output's own type, and prints the library version and the counters
 * summed over the jobs ("NAME VALUE" lines).  Exit status 1 on any
 * failure, with libloom's message.
 */
#include <stdio.h>
#include <stdlib.h>

#include <loom/isa.h>
#include <loom/loom.h>

static int failed(const char *what, const char *msg) {
  fprintf(stderr, "loom_example: %s: %s\n", what, msg);
  return 1;
}

static size_t elements(const struct loom_tensor_info *t) {
  size_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= (size_t)t->dims[i];
  return n;
}

/* Reads exactly `bytes` of `path` into a new buffer; NULL on failure. */
static void *read_exact(const char *path, size_t bytes) {
  FILE *f = fopen(path, "rb");
  void *p = malloc(bytes ? bytes : 1);
  int ok = f && p && fread(p, 1, bytes, f) == bytes && fgetc(f) == EOF;
  if (f) fclose(f);
  if (!ok) free(p);
  return ok ? p : NULL;
}

static int run(loom_model *m, const char *in_path, const char *out_path) {
  const struct loom_tensor_info *in = loom_model_input(m, 0), *out = loom_model_output(m, 0);
  float *x = read_exact(in_path, elements(in) * sizeof(float));
  if (!x) return failed(in_path, "not the input's size in float32");
  loom_status st = loom_model_set_input(m, in->name, LOOM_DT_F32, in->rank, in->dims, x);
  free(x);
  if (st == LOOM_OK) st = loom_model_run(m, 0);
  size_t bytes = elements(out) * loom_dtype_size(out->dtype);
  void *y = malloc(bytes);
  if (st == LOOM_OK && y) st = loom_model_get_output(m, out->name, y, bytes);
  FILE *f = st == LOOM_OK && y ? fopen(out_path, "wb") : NULL;
  int ok = f && fwrite(y, 1, bytes, f) == bytes;
  if (f) ok &= fclose(f) == 0;
  free(y);
  return ok ? 0 : -1;
}

static void print_counters(const loom_model *m) {
  uint64_t total[LOOM_CNT_COUNT] = {0};
  for (int j = 0; j < loom_model_job_count(m); j++)
    for (int c = 0; c < LOOM_CNT_COUNT; c++) total[c] += loom_model_job_result(m, j)->counters[c];
  for (int c = 0; c < LOOM_CNT_COUNT; c++)
    printf("%s %llu\n", loom_counter_name((uint32_t)c), (unsigned long long)total[c]);
}

int main(int argc, char **argv) {
  char msg[LOOM_MSG_MAX];
  loom_device *dev;
  loom_model *m;
  if (argc != 5) {
    fprintf(stderr, "usage: loom_example MODEL.loom BACKEND INPUT.f32 OUTPUT.bin\n");
    return 2;
  }
  printf("libloom %s\n", loom_version());
  if (loom_device_open(argv[2], NULL, &dev, msg) != LOOM_OK) return failed(argv[2], msg);
  if (loom_model_load(dev, argv[1], &m, msg) != LOOM_OK) {
    loom_device_close(dev);
    return failed(argv[1], msg);
  }
  int rc = run(m, argv[3], argv[4]);
  if (rc < 0) rc = failed(argv[1], loom_device_error(dev));
  if (rc == 0) print_counters(m);
  loom_model_free(m);
  loom_device_close(dev);
  return rc;
}
