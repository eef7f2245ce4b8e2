/*
 * cmd_inspect.c - `loom inspect MODEL.loom`: everything a .loom file holds,
 * in the order of docs/format.md, after the full validation of the loader.
 *
 * The file is parsed (and so validated) before anything is printed; a file
 * the parser refuses is reported with the parser's "file: offset: what"
 * message.  Instructions are decoded as a last check, since the parser
 * leaves illegal encodings to the hardware: inspect lists everything and
 * then fails (exit 1) naming the first illegal instruction.
 *
 * Native host code gets its own lines: the target triple and machine, who
 * signed it (your key, another, nobody, or changed since), and whether
 * `loom run` here would run it, run the portable ops instead, or refuse the
 * image (the loader's ELF checks, which also make inspect exit 1).  Nothing
 * of the image is loaded to find out.
 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "driver/core/hostcode_format.h"
#include "driver/core/hostops.h"
#include "driver/core/loomfile.h"
#include "loom/isa.h"
#include "loom/loom.h"

static const char *const kind_names[LOOM_BUFKIND_COUNT] = {"const", "work"};
static const char *const role_names[LOOM_ROLE_COUNT] = {"internal", "input", "output"};
static const char *const layout_names[LOOM_LAYOUT_COUNT] = {"plain", "nchwc", "nc"};

static uint64_t le(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* `c` is the configuration the file was built for, when known. */
static void print_header(const struct loom_file *f, const char *path, const struct loom_hw_config *c) {
  printf("file:    %s (%" PRIu64 " bytes), format %u.%u, ISA version %u\n", path, f->file_size,
         f->version_major, f->version_minor, f->isa_version);
  if (c)
    printf("config:  %s (0x%08X), %dx%dx%d\n", c->name, f->config_hash, c->batch, c->block_in,
           c->block_out);
  else printf("config:  unknown (0x%08X)\n", f->config_hash);
}

/* The section table, read from the validated copy of the file. */
static void print_sections(const struct loom_file *f) {
  const uint8_t *p = f->storage;
  uint64_t table = le(p + LOOM_FILE_OFF_SECTION_TABLE, 8);
  uint32_t count = (uint32_t)le(p + LOOM_FILE_OFF_SECTION_COUNT, 4);
  printf("sections: %u\n  %-8s %10s %10s\n", count, "type", "offset", "bytes");
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *e = p + table + (uint64_t)i * LOOM_FILE_SECTION_ENTRY_SIZE;
    printf("  %-8s %#10" PRIx64 " %10" PRIu64 "\n", loom_section_name((uint32_t)le(e, 4)),
           le(e + 8, 8), le(e + 16, 8));
  }
}

static void print_buffers(const struct loom_file *f) {
  printf("buffers: %u\n", f->buffer_count);
  for (uint32_t i = 0; i < f->buffer_count; i++) {
    const struct loom_file_buffer *b = &f->buffers[i];
    printf("  %u: %-16s %-5s %10" PRIu64 " bytes, align %u", i, loom_file_string(f, b->name),
           kind_names[b->kind], b->size, b->align);
    if (b->kind == LOOM_BUFKIND_CONST) printf(", data at DATA+%#" PRIx64, b->data_offset);
    printf("\n");
  }
}

static void print_shape(const struct loom_file_tensor *t) {
  printf("[");
  for (uint32_t d = 0; d < t->rank; d++) printf("%s%" PRId64, d ? ", " : "", t->dims[d]);
  printf("]");
}

static void print_tensor(const struct loom_file *f, uint32_t i) {
  const struct loom_file_tensor *t = &f->tensors[i];
  printf("  %u: %-16s %-8s %s", i, loom_file_string(f, t->name), role_names[t->role],
         loom_dtype_name((loom_dtype)t->dtype));
  if (t->user_dtype != t->dtype) printf(" (user %s)", loom_dtype_name((loom_dtype)t->user_dtype));
  printf(" ");
  print_shape(t);
  printf(" %s", layout_names[t->layout]);
  if (t->layout != LOOM_LAYOUT_PLAIN) printf("/%u", t->layout_block);
  printf(", buffer %u +%#" PRIx64 ", %" PRIu64 " bytes", t->buffer, t->offset, t->bytes);
  if (t->scale != 0) printf(", scale %g zero point %d", (double)t->scale, t->zero_point);
  printf("\n");
}

/* "3 load, 4 compute, 1 store" by decoding the job's instructions. */
static void print_queue_counts(const struct loom_file *f, const struct loom_file_job *j) {
  uint32_t q[LOOM_Q_COUNT + 1] = {0};
  for (uint32_t k = 0; k < j->insn_count; k++) {
    struct loom_insn d;
    const uint8_t *b = f->insns + ((size_t)j->insn_first + k) * LOOM_INSN_BYTES;
    if (loom_insn_decode(b, &d, NULL) != LOOM_ERR_NONE) q[LOOM_Q_COUNT]++;
    else q[loom_insn_queue(&d)]++;
  }
  printf(" (%u load, %u compute, %u store", q[LOOM_Q_LOAD], q[LOOM_Q_COMPUTE], q[LOOM_Q_STORE]);
  if (q[LOOM_Q_COUNT]) printf(", %u illegal", q[LOOM_Q_COUNT]);
  printf(")");
}

/* JOBMETA (1.2): the layer and the compiler's figures. */
static void print_jobmeta(const struct loom_file *f, const struct loom_file_jobmeta *m) {
  printf("\n     layer: %s, %s, %" PRIu64 " MACs; estimated %" PRIu64 " cycles, %" PRIu64
         " DMA bytes (compulsory %" PRIu64 ")",
         loom_file_string(f, m->name), loom_file_string(f, m->op), m->macs, m->est_cycles,
         m->dma_bytes, m->min_bytes);
}

static void print_jobs(const struct loom_file *f) {
  printf("jobs: %u\n", f->job_count);
  for (uint32_t i = 0; i < f->job_count; i++) {
    const struct loom_file_job *j = &f->jobs[i];
    printf("  %u: %u instructions from %u", i, j->insn_count, j->insn_first);
    print_queue_counts(f, j);
    if (f->jobmeta) print_jobmeta(f, &f->jobmeta[i]);
    printf("\n     segments:");
    for (int s = 0; s < LOOM_NUM_SEGMENTS; s++)
      if (j->segments[s] != LOOM_FILE_NO_BUFFER)
        printf(" %d=%s", s, loom_file_string(f, f->buffers[j->segments[s]].name));
    printf("\n");
  }
}

static void print_tensor_list(const struct loom_file *f, const char *label, const uint32_t *t,
                              int n) {
  int any = 0;
  for (int k = 0; k < n; k++) {
    if (t[k] == LOOM_FILE_NO_BUFFER) continue;
    printf("%s%s", any ? ", " : label, loom_file_string(f, f->tensors[t[k]].name));
    any = 1;
  }
}

static void print_steps(const struct loom_file *f) {
  printf("steps: %u\n", f->step_count);
  for (uint32_t i = 0; i < f->step_count; i++) {
    const struct loom_file_step *s = &f->steps[i];
    if (s->kind == LOOM_STEP_JOB) {
      printf("  %u: job %u\n", i, s->index);
      continue;
    }
    if (s->kind == LOOM_STEP_KERNEL) {
      const struct loom_file_kernel *k = &f->kernels[s->index];
      const uint32_t *io = loom_file_kernel_io(f, k);
      printf("  %u: kernel %s (opset %u)", i, loom_file_string(f, k->op), k->opset);
      print_tensor_list(f, " in: ", io, (int)k->n_in);
      print_tensor_list(f, " out: ", io + k->n_in, (int)k->n_out);
      printf(" attrs: %u%s\n", k->n_attrs, k->flags & LOOM_FILE_KERNEL_DYNAMIC ? ", dynamic" : "");
      continue;
    }
    printf("  %u: host %s", i, loom_hostop_name(s->index));
    print_tensor_list(f, " in: ", s->inputs, 4);
    print_tensor_list(f, " out: ", s->outputs, 2);
    if (s->param_size) printf(" params: %" PRIu64 " bytes", s->param_size);
    printf("\n");
  }
}

static uint32_t native_only_steps(const struct loom_file *f) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < f->step_count; i++)
    n += f->steps[i].kind == LOOM_STEP_HOST && f->steps[i].index == LOOM_HOSTOP_NATIVE;
  return n;
}

/* "signed with your key (id ..., PATH)" and friends; returns the state. */
static enum loom_sig_state print_signature(const struct loom_file *f) {
  struct loom_key k;
  char msg[LOOM_MSG_MAX], id[17] = "", mine[17];
  loom_status st = loom_key_load(0, &k, msg);
  enum loom_sig_state sig = loom_file_signed_by(f, st == LOOM_OK ? &k : NULL);
  if (f->signature) loom_key_id_text(f->signature->key_id, id);
  loom_key_id_text(k.id, mine);
  printf("  signature: %s", loom_sig_state_name(sig));
  if (sig == LOOM_SIG_MINE || sig == LOOM_SIG_CHANGED) printf(" (key %s, %s)", id, k.path);
  else if (sig == LOOM_SIG_OTHER_KEY && st == LOOM_OK) printf(" (key %s; yours is %s, %s)", id, mine, k.path);
  else if (sig == LOOM_SIG_OTHER_KEY) printf(" (key %s; no key here: %s)", id, st == LOOM_E_NOTFOUND ? k.path : msg);
  printf("\n");
  return sig;
}

/* The HOSTCODE lines; CLI_USER when the loader would refuse the image. */
static int print_native(const struct loom_file *f) {
  const struct loom_file_hostcode *h = f->hostcode;
  struct loom_hostcode_machine img, self = loom_hostcode_self();
  char why[128], mi[64], ms[64];
  if (!h) return printf("native code: none\n"), CLI_OK;
  if (loom_hostcode_elf_machine(f->hostcode_image, h->image_size, &img, why))
    return cli_error("%s", why); /* the parser checked the magic; cannot happen */
  loom_hostcode_machine_text(&img, mi, sizeof mi);
  loom_hostcode_machine_text(&self, ms, sizeof ms);
  printf("native code: %s (%s), %u entr%s, %" PRIu64 " bytes of image\n", loom_file_string(f, h->triple), mi,
         h->entry_count, h->entry_count == 1 ? "y" : "ies", h->image_size);
  enum loom_sig_state sig = print_signature(f);
  int here = loom_hostcode_machine_is_self(&img);
  const char *instead = native_only_steps(f) ? "the model does not load" : "the portable host ops run";
  if (!here) return printf("  here: not for this machine (%s): %s\n", ms, instead), CLI_OK;
  if (loom_hostcode_elf_check(f->hostcode_image, h->image_size, why)) {
    printf("  here: refused by the loader's checks: %s\n", why);
    return CLI_USER;
  }
  if (sig == LOOM_SIG_MINE) printf("  here: runs (%s)\n", ms);
  else printf("  here: runs only with --trust-native; otherwise %s\n", instead);
  return CLI_OK;
}


/* The configuration of --config (which must be the file's), else the
 * named one with the file's hash; *known is 0 when there is neither. */
static int file_config(const struct loom_file *f, const char *path, const char *config,
                       struct loom_hw_config *c, int *known) {
  char msg[LOOM_MSG_MAX];
  const struct loom_hw_config *named = loom_hw_config_by_hash(f->config_hash);
  *known = 1;
  if (!config) {
    if (named) *c = *named;
    else *known = 0;
    return CLI_OK;
  }
  if (loom_hw_config_resolve(config, c, msg, sizeof msg)) return cli_error("--config: %s", msg);
  if (c->hash != f->config_hash)
    return cli_error("%s: built for hardware config 0x%08X, not '%s' (0x%08X)", path, f->config_hash,
                     c->name, c->hash);
  return CLI_OK;
}

static int inspect(const char *path, const char *config) {
  struct loom_file f;
  struct loom_hw_config c;
  char msg[LOOM_MSG_MAX];
  int known;
  if (loom_file_read(path, &f, msg) != LOOM_OK) return cli_error("%s", msg);
  if (file_config(&f, path, config, &c, &known) != CLI_OK) {
    loom_file_free(&f);
    return CLI_USER;
  }
  print_header(&f, path, known ? &c : NULL);
  print_sections(&f);
  print_buffers(&f);
  printf("tensors: %u\n", f.tensor_count);
  for (uint32_t i = 0; i < f.tensor_count; i++) print_tensor(&f, i);
  print_jobs(&f);
  print_steps(&f);
  int r = print_native(&f);
  if (r != CLI_OK) cli_error("%s: its native code would be refused at load (see above)", path);
  if (loom_file_check_insns(&f, path, msg) != LOOM_OK) r = cli_error("%s", msg);
  else printf("instructions: %u, all legal\n", f.insn_count);
  loom_file_free(&f);
  return r;
}

static int run_inspect(int argc, char **argv) {
  const char *path = NULL, *config = NULL;
  for (int i = 1; i < argc; i++) {
    int r;
    if (cli_is_help(argv[i])) {
      cli_print_help(&cli_cmd_inspect, stdout);
      return CLI_OK;
    }
    if ((r = cli_option_value(&cli_cmd_inspect, argc, argv, &i, "--config", "-c", &config))) {
      if (r < 0) return CLI_USER;
      continue;
    }
    if (argv[i][0] == '-' && argv[i][1])
      return cli_usage_error(&cli_cmd_inspect, "unknown option '%s'", argv[i]);
    if (path) return cli_usage_error(&cli_cmd_inspect, "unexpected argument '%s'", argv[i]);
    path = argv[i];
  }
  if (!path) return cli_usage_error(&cli_cmd_inspect, "no .loom file given");
  return inspect(path, config);
}

const struct cli_cmd cli_cmd_inspect = {
    .name = "inspect",
    .summary = "describe a .loom file and check every instruction",
    .help = "usage: loom inspect MODEL.loom [--config NAME|FILE]\n"
            "\n"
            "Validates MODEL.loom as the loader does and prints its header and\n"
            "configuration, the section table, buffers, tensors (role, dtype, shape,\n"
            "layout, quantization), jobs (instruction counts per queue, segment map,\n"
            "and the layer with the compiler's figures when the file has them),\n"
            "steps, and the native host code: its target, who signed it, and whether\n"
            "'loom run' would run it here (docs/hostcode.md).  Then decodes every\n"
            "instruction: an illegal one, or native code the loader would refuse,\n"
            "is reported and the exit status is 1.\n"
            "\n"
            "A binary compiled for a configuration file shows its configuration as\n"
            "unknown unless --config names that file (its hash must be the binary's).\n"
            "\n"
            "example:\n"
            "  loom inspect gemm64.loom\n",
    .run = run_inspect,
};
