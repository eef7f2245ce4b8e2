/*
 * hostcode_harness.c - runs a .loom's native host code on the machine it
 * was built for (under qemu-user in tests/llvm/run-cross.sh), through the
 * same runtime path as any user: loom_model_load -> hostcode.c (memfd +
 * dlopen) -> the entry points.
 *
 *   hostcode_harness MODEL.loom
 *       every input random (seeded), the model run with its native code and
 *       again with HOSTCODE stripped (the portable C ops); outputs must be
 *       identical, except outputs named sm_* (softmax: 2e-7 + 4e-7 relative,
 *       or one step when quantized)
 *   hostcode_harness MODEL.loom INPUT.npy EXPECTED.npy [TOL]
 *       input 0 from INPUT.npy, output 0 against EXPECTED.npy (computed on
 *       the build machine by the reference interpreter) within TOL (0)
 *
 * It first checks that the image is for this machine and loads
 * (loom_hostcode_loaded), so a silent fallback cannot pass the test.
 * Prints one PASS line or FAIL with the reason; exit status 0 / 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver/lib/hostcode.h"
#include "driver/core/loomfile.h"
#include "driver/core/npy.h"
#include "loom/loom.h"

static int failf(const char *fmt, const char *a, const char *b) {
  printf("FAIL ");
  printf(fmt, a, b);
  printf("\n");
  return 1;
}

static uint64_t rng = 12345;
static uint32_t rnd(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng >> 33);
}

static void random_fill(loom_dtype dt, void *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (dt == LOOM_DT_F32) {
      float v = ((float)(rnd() % 20001) - 10000.0f) / 1000.0f;
      if (rnd() % 50 == 0) v = (float)(int)(rnd() % 64) * 0.0625f; /* exact ties */
      ((float *)p)[i] = v;
    } else if (dt == LOOM_DT_I32) {
      ((int32_t *)p)[i] = (int32_t)(rnd() % 4001) - 2000;
    } else {
      ((uint8_t *)p)[i] = (uint8_t)rnd();
    }
  }
}

static size_t elems(const struct loom_tensor_info *t) {
  size_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= (size_t)t->dims[i];
  return n;
}

/* The image must be for this machine and load. */
static int check_native(const struct loom_file *f, const char *path) {
  struct loom_hostcode *hc;
  char msg[LOOM_MSG_MAX];
  if (!f->hostcode) return failf("%s%s: no HOSTCODE", path, "");
  if (loom_hostcode_open(f, path, 1, &hc, msg)) return failf("%s%s", msg, "");
  int ok = loom_hostcode_loaded(hc);
  printf("%s: %s\n", path, loom_hostcode_describe(hc));
  loom_hostcode_close(hc);
  return ok ? 0 : failf("%s: %s", path, "the native code did not load");
}

static int same(const struct loom_tensor_info *t, const void *a, const void *b) {
  size_t n = elems(t);
  int soft = !strncmp(t->name, "sm_", 3);
  if (!soft) return !memcmp(a, b, n * loom_dtype_size(t->dtype));
  for (size_t i = 0; i < n; i++) {
    if (t->dtype == LOOM_DT_F32) {
      float x = ((const float *)a)[i], y = ((const float *)b)[i];
      if (!(fabsf(x - y) <= 2e-7f + 4e-7f * fabsf(y)) && !(isnan(x) && isnan(y))) return 0;
    } else if (abs((int)((const uint8_t *)a)[i] - (int)((const uint8_t *)b)[i]) > 1) {
      return 0; /* int8 and uint8 alike: one step, away from the wrap */
    }
  }
  return 1;
}

/* Sets every input of both models to the same random data. */
static int set_inputs(loom_model *a, loom_model *b) {
  for (int i = 0; i < loom_model_input_count(a); i++) {
    const struct loom_tensor_info *t = loom_model_input(a, i);
    void *data = malloc(elems(t) * loom_dtype_size(t->dtype) + 1);
    random_fill(t->dtype, data, elems(t));
    int rc = loom_model_set_input(a, t->name, t->dtype, t->rank, t->dims, data) ||
             loom_model_set_input(b, t->name, t->dtype, t->rank, t->dims, data);
    free(data);
    if (rc) return -1;
  }
  return 0;
}

static int compare_outputs(loom_model *a, loom_model *b, int *checked) {
  for (int i = 0; i < loom_model_output_count(a); i++) {
    const struct loom_tensor_info *t = loom_model_output(a, i);
    size_t bytes = elems(t) * loom_dtype_size(t->dtype);
    void *x = malloc(bytes + 1), *y = malloc(bytes + 1);
    int ok = !loom_model_get_output(a, t->name, x, bytes) && !loom_model_get_output(b, t->name, y, bytes) &&
             same(t, x, y);
    free(x), free(y);
    if (!ok) return failf("output '%s' differs between native and portable host ops%s", t->name, "");
    (*checked)++;
  }
  return 0;
}

/* Native against portable on random inputs. */
static int run_random(loom_device *dev, const struct loom_file *f, const char *path) {
  char msg[LOOM_MSG_MAX];
  struct loom_file_builder *b = loom_file_builder_from(f);
  size_t n = 0;
  uint8_t *plain = b ? loom_file_builder_finish(b, &n) : NULL;
  loom_file_builder_free(b);
  loom_model *mn = NULL, *mp = NULL;
  if (!plain || loom_model_load(dev, path, &mn, msg) || loom_model_load_memory(dev, plain, n, "portable", &mp, msg))
    return free(plain), failf("%s%s", msg, "");
  int checked = 0, rc = 0;
  for (int round = 0; round < 20 && !rc; round++) {
    if (set_inputs(mn, mp)) rc = failf("set_input: %s%s", loom_device_error(dev), "");
    if (!rc && loom_model_run(mn, 0)) rc = failf("native run: %s%s", loom_device_error(dev), "");
    if (!rc && loom_model_run(mp, 0)) rc = failf("portable run: %s%s", loom_device_error(dev), "");
    if (!rc) rc = compare_outputs(mn, mp, &checked);
  }
  if (!rc) printf("PASS %s: %d outputs over 20 random runs equal to the portable ops\n", path, checked);
  loom_model_free(mn), loom_model_free(mp);
  free(plain);
  return rc;
}

/* Input 0 from a file, output 0 against the interpreter's. */
static int run_expected(loom_device *dev, const char *path, const char *inp, const char *exp, float tol) {
  char msg[LOOM_MSG_MAX];
  struct loom_npy x, y;
  loom_model *m = NULL;
  if (loom_npy_read(inp, &x, msg) || loom_npy_read(exp, &y, msg) || loom_model_load(dev, path, &m, msg))
    return failf("%s%s", msg, "");
  const struct loom_tensor_info *ti = loom_model_input(m, 0), *to = loom_model_output(m, 0);
  float *got = malloc(y.bytes + 4);
  int rc = loom_model_set_input(m, ti->name, LOOM_DT_F32, ti->rank, ti->dims, x.data) || loom_model_run(m, 0) ||
           loom_model_get_output(m, to->name, got, y.bytes);
  if (rc) rc = failf("%s%s", loom_device_error(dev), "");
  float worst = 0;
  for (size_t i = 0; !rc && i < y.bytes / 4; i++) {
    float d = fabsf(got[i] - ((const float *)y.data)[i]);
    if (d > worst) worst = d;
  }
  if (!rc && worst > tol) rc = failf("%s: output differs from the interpreter's (%s)", path, "see above");
  if (!rc) printf("PASS %s: %zu outputs, largest difference %g (allowed %g)\n", path, y.bytes / 4, (double)worst, (double)tol);
  free(got);
  loom_model_free(m);
  loom_npy_free(&x), loom_npy_free(&y);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 4 && argc != 5) {
    fprintf(stderr, "usage: hostcode_harness MODEL.loom [INPUT.npy EXPECTED.npy [TOL]]\n");
    return 2;
  }
  char msg[LOOM_MSG_MAX];
  struct loom_file f;
  loom_device *dev;
  if (loom_file_read(argv[1], &f, msg)) return failf("%s%s", msg, "");
  const struct loom_hw_config *cfg = loom_hw_config_by_hash(f.config_hash);
  char opts[64];
  /* made by make_cross_models for this test: consented to (trust_native) */
  snprintf(opts, sizeof opts, "config=%s,trust_native=1", cfg ? cfg->name : "default");
  int rc = check_native(&f, argv[1]);
  if (!rc && loom_device_open("fsim", opts, &dev, msg)) rc = failf("%s%s", msg, "");
  if (!rc) {
    rc = argc == 2 ? run_random(dev, &f, argv[1])
                   : run_expected(dev, argv[1], argv[2], argv[3], argc == 5 ? strtof(argv[4], NULL) : 0);
    loom_device_close(dev);
  }
  loom_file_free(&f);
  return rc ? 1 : 0;
}
