/*
 * loomfile.h - the .loom binary format: reader, validator and writer.
 *
 * Layout (all integers little-endian; docs/format.md is the normative text):
 *
 *   header (64 bytes) | section table (32 bytes x section_count) | sections
 *
 * The parser validates every field before anything uses it and names the
 * field and its file offset when it refuses a file.  The in-memory form
 * below points into one owned copy of the file, so a parsed file needs
 * exactly one loom_file_free().
 */
#ifndef LOOM_LOOMFILE_H
#define LOOM_LOOMFILE_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

#define LOOM_FILE_MAGIC "\x89LOOM\r\n\x1a"
#define LOOM_FILE_VERSION_MAJOR 1
#define LOOM_FILE_VERSION_MINOR 4  /* 1.1 added HOSTCODE, 1.2 JOBMETA, 1.3 KERNELS and the host-side
                                    * dtypes, 1.4 SIGNATURE; the writer emits 1.0 without them */
#define LOOM_FILE_HEADER_SIZE 64
#define LOOM_FILE_SECTION_ENTRY_SIZE 32
#define LOOM_FILE_MAX_SIZE (UINT64_C(1) << 32)  /* 4 GiB cap on a model */
/* Cap on the sum of a model's buffer sizes: the device memory loading it
 * takes (each buffer is also at most LOOM_FILE_MAX_SIZE). */
#define LOOM_FILE_MAX_BUFFER_BYTES (UINT64_C(1) << 32)
#define LOOM_FILE_NO_BUFFER 0xFFFFFFFFu

enum loom_section_type {
  LOOM_SEC_STRTAB = 1,  /* NUL-terminated names, referenced by offset */
  LOOM_SEC_INSNS,       /* all instruction streams, 16 bytes each */
  LOOM_SEC_DATA,        /* constant bytes: weights, micro-ops, parameters */
  LOOM_SEC_BUFFERS,     /* struct loom_file_buffer[] */
  LOOM_SEC_TENSORS,     /* struct loom_file_tensor[] */
  LOOM_SEC_JOBS,        /* struct loom_file_job[] */
  LOOM_SEC_STEPS,       /* struct loom_file_step[]: the program, in order */
  LOOM_SEC_HOSTCODE,    /* (1.1) native code of HOST steps: struct loom_file_hostcode */
  LOOM_SEC_JOBMETA,     /* (1.2) struct loom_file_jobmeta[], one per job: what the compiler knows */
  LOOM_SEC_KERNELS,     /* (1.3) struct loom_file_kernel[]: ONNX ops run on the host kernels */
  LOOM_SEC_SIGNATURE,   /* (1.4) one struct loom_file_signature: consent to run HOSTCODE */
  LOOM_SEC_COUNT
};

enum loom_buffer_kind {
  LOOM_BUFKIND_CONST = 0, /* initialized from DATA, read-only for the program */
  LOOM_BUFKIND_WORK,      /* zero-filled at load: activations, inputs, outputs */
  LOOM_BUFKIND_COUNT
};

enum loom_tensor_role {
  LOOM_ROLE_INTERNAL = 0,
  LOOM_ROLE_INPUT,
  LOOM_ROLE_OUTPUT,
  LOOM_ROLE_COUNT
};

enum loom_layout {
  LOOM_LAYOUT_PLAIN = 0, /* C order of dims */
  LOOM_LAYOUT_NCHWC,     /* [N][ceil(C/c)][H][W][c], c = layout_block, pad channels 0 */
  LOOM_LAYOUT_NC,        /* [N][ceil(C/c)][c] for vectors, c = layout_block */
  LOOM_LAYOUT_COUNT
};

enum loom_step_kind {
  LOOM_STEP_JOB = 1,  /* run jobs[index] on the accelerator */
  LOOM_STEP_HOST,     /* run host op `op` on tensors */
  LOOM_STEP_KERNEL,   /* (1.3) run the ONNX op of KERNELS[index] on the host kernels */
  LOOM_STEP_COUNT
};

/* On-disk records, 8-byte aligned in their sections. */
struct loom_file_buffer {   /* 32 bytes */
  uint32_t name;            /* STRTAB offset */
  uint32_t kind;            /* enum loom_buffer_kind */
  uint64_t size;            /* bytes, > 0 */
  uint64_t data_offset;     /* CONST: offset of `size` bytes in DATA; WORK: 0 */
  uint32_t align;           /* power of two >= 64 */
  uint32_t reserved;        /* 0 */
};

/* The element types a tensor may have: up to float32 in every version, all
 * of loom_dtype (int64, bool, float16, ...) from 1.3 on (host steps). */
#define LOOM_FILE_DT_COUNT (LOOM_DT_F32 + 1)
#define LOOM_FILE_DT_COUNT_1_3 LOOM_DT_COUNT

struct loom_file_tensor {   /* 104 bytes */
  uint32_t name;            /* STRTAB offset */
  uint32_t role;            /* enum loom_tensor_role */
  uint32_t dtype;           /* stored element type, enum loom_dtype below LOOM_FILE_DT_COUNT */
  uint32_t user_dtype;      /* type the user reads/writes (f32 for quantized) */
  uint32_t layout;          /* enum loom_layout */
  uint32_t layout_block;    /* channel block for blocked layouts, else 0 */
  uint32_t rank;            /* 0..LOOM_MAX_RANK */
  uint32_t buffer;          /* index into BUFFERS */
  int64_t dims[LOOM_MAX_RANK]; /* logical shape, each >= 1; unused = 0 */
  uint64_t offset;          /* byte offset in the buffer */
  uint64_t bytes;           /* stored size, must match dtype/layout/dims */
  float scale;              /* quantization scale, 0 = not quantized */
  int32_t zero_point;
};

struct loom_file_job {      /* 48 bytes */
  uint32_t insn_first;      /* first instruction (index into INSNS) */
  uint32_t insn_count;
  uint32_t segments[8];     /* buffer index per segment, or LOOM_FILE_NO_BUFFER */
  uint32_t flags;           /* 0 */
  uint32_t reserved;        /* 0 */
};

struct loom_file_step {     /* 48 bytes */
  uint32_t kind;            /* enum loom_step_kind */
  uint32_t index;           /* JOB: job index; HOST: host op kind */
  uint32_t inputs[4];       /* tensor indices, LOOM_FILE_NO_BUFFER if unused */
  uint32_t outputs[2];
  uint64_t param_offset;    /* HOST: parameters in DATA */
  uint64_t param_size;
};

/* JOBMETA (format 1.2): per job, in job order, the layer it computes and the
 * compiler's figures for it, which `loom run --profile` sets beside the
 * measured ones.  Optional: absent, or exactly one record per job. */
struct loom_file_jobmeta {  /* 48 bytes */
  uint32_t name;            /* STRTAB name of the layer (the ONNX node) */
  uint32_t op;              /* STRTAB name of the operation: "conv 3x3/1", "fc", ... */
  uint64_t macs;            /* useful multiply-accumulates */
  uint64_t est_cycles;      /* the compiler's cost-model estimate of the job */
  uint64_t dma_bytes;       /* DRAM bytes the compiler expects the job to move */
  uint64_t min_bytes;       /* compulsory traffic: inputs, weights, parameters, output once */
  uint32_t flags;           /* 0 */
  uint32_t reserved;        /* 0 */
};

/* KERNELS (format 1.3): one record per KERNEL step, an ONNX operator (ai.onnx
 * domain) that runs on the host kernels (driver/core/kernel.h) over plain
 * tensors.  Operands and results are listed in DATA, the attributes too. */
#define LOOM_FILE_KERNEL_DYNAMIC 1u  /* data-dependent results: their dims are capacities */
#define LOOM_FILE_KERNEL_MAX_IO 4096
#define LOOM_FILE_KERNEL_MAX_ATTRS 1024
#define LOOM_FILE_KATTR_MAX_COUNT (1u << 20)

struct loom_file_kernel {   /* 48 bytes */
  uint32_t op;              /* STRTAB name: the ONNX op type, "Resize" */
  uint32_t opset;           /* the ai.onnx version whose semantics apply, >= 1 */
  uint32_t n_in, n_out;     /* operands (absent optional ones included), results */
  uint64_t io_offset;       /* DATA: n_in + n_out uint32 tensor indices, 4-aligned;
                             * LOOM_FILE_NO_BUFFER marks an absent optional operand */
  uint64_t attr_offset;     /* DATA: n_attrs struct loom_file_kattr, 8-aligned */
  uint32_t n_attrs;
  uint32_t flags;           /* LOOM_FILE_KERNEL_* */
  uint64_t reserved;        /* 0 */
};

/* An attribute of a kernel step, in DATA.  kind is enum loom_kattr_kind
 * (kernel.h): 0 INT, 1 FLOAT, 2 STRING, 3 INTS, 4 FLOATS, 5 STRINGS, 6 TENSOR. */
struct loom_file_kattr {    /* 32 bytes */
  uint32_t name;            /* STRTAB name */
  uint32_t kind;
  uint64_t count;           /* lists: the number of values; INT, FLOAT, STRING, TENSOR: 1 */
  uint64_t value;           /* INT: the int64 (two's complement); FLOAT: its bits; STRING: a
                             * STRTAB offset (0: ""); TENSOR: a tensor index; lists: the DATA
                             * offset of count int64 (8-aligned), float bits or uint32 STRTAB
                             * offsets (4-aligned) */
  uint64_t reserved;        /* 0 */
};

/* HOSTCODE (format 1.1, docs/hostcode.md): native code for some or all
 * HOST steps, as one ELF shared object built by the compiler through LLVM.
 * The section is a byte section laid out as
 *
 *   struct loom_file_hostcode | entries[entry_count] | ELF image
 *
 * The runtime uses the image when its ELF class, byte order, machine and
 * float ABI are the running process's, and the portable C host ops
 * otherwise. */
#define LOOM_HOSTCODE_ABI 1   /* int32_t entry(void *const *in, void *const *out) */

struct loom_file_hostcode {       /* 32 bytes, at offset 0 of HOSTCODE */
  uint32_t triple;            /* STRTAB name: target triple, "aarch64-unknown-linux-gnu" */
  uint32_t cpu;               /* STRTAB offset of the CPU the code is tuned for; 0 = generic */
  uint32_t abi;               /* LOOM_HOSTCODE_ABI */
  uint32_t entry_count;       /* records after this header */
  uint64_t image_offset;      /* of the ELF image in the section: 32 + 24 * entry_count */
  uint64_t image_size;        /* the image runs to the end of the section */
};

struct loom_file_hostcode_entry { /* 24 bytes */
  uint32_t step;              /* index of a HOST step; each step at most once */
  uint32_t symbol;            /* STRTAB name of the entry point in the image */
  uint64_t signature;         /* loom_hostcode_signature() the code was specialized for */
  uint32_t flags;             /* 0 */
  uint32_t reserved;          /* 0 */
};

/* SIGNATURE (format 1.4, docs/hostcode.md): the consent that lets the
 * runtime run the file's native code.  `loom compile` adds it with the
 * user's key (hostcode_trust.c); the runtime runs HOSTCODE only when it
 * verifies with the key of the user running it, or when that user passes
 * --trust-native.  One record; absent or empty means unsigned. */
#define LOOM_SIGNATURE_HMAC_SHA256 1 /* the only algorithm */

struct loom_file_signature { /* 64 bytes */
  uint32_t algorithm;        /* LOOM_SIGNATURE_HMAC_SHA256 */
  uint32_t flags;            /* 0 */
  uint8_t key_id[8];         /* names the key: HMAC-SHA256(key, "loom key id")[0..8) */
  uint8_t mac[32];           /* HMAC-SHA256(key, "loom signature 1\0" || the file, crc32 and mac zeroed) */
  uint8_t reserved[16];      /* 0 */
};

struct loom_file {
  uint32_t version_major, version_minor;
  uint32_t config_hash;
  uint32_t isa_version;
  const char *strtab; uint64_t strtab_size;
  const uint8_t *insns; uint32_t insn_count;
  const uint8_t *data; uint64_t data_size;
  const struct loom_file_buffer *buffers; uint32_t buffer_count;
  const struct loom_file_tensor *tensors; uint32_t tensor_count;
  const struct loom_file_job *jobs; uint32_t job_count;
  const struct loom_file_step *steps; uint32_t step_count;
  /* HOSTCODE (NULL / 0 when absent): header, entries, ELF image */
  const struct loom_file_hostcode *hostcode;
  const struct loom_file_hostcode_entry *hostcode_entries;
  const uint8_t *hostcode_image;
  /* JOBMETA (NULL when absent): job_count records */
  const struct loom_file_jobmeta *jobmeta;
  /* KERNELS (1.3; NULL / 0 when absent) */
  const struct loom_file_kernel *kernels; uint32_t kernel_count;
  /* SIGNATURE (NULL when absent), checked by loom_file_signed_by() */
  const struct loom_file_signature *signature;
  void *storage;            /* owned, aligned copy of the file */
  uint64_t file_size;
};

/* Parses and validates `size` bytes (copied).  `name` prefixes messages:
 * "model.loom: offset 0x40: section 2: offset + size exceeds the file". */
loom_status loom_file_parse(const void *bytes, size_t size, const char *name,
                            struct loom_file *out, char msg[LOOM_MSG_MAX]);
loom_status loom_file_read(const char *path, struct loom_file *out, char msg[LOOM_MSG_MAX]);
void loom_file_free(struct loom_file *f);

/* The string at STRTAB offset `off` (validated by the parser). */
const char *loom_file_string(const struct loom_file *f, uint32_t off);

/* Bytes a tensor occupies for its dtype, layout and dims; 0 on overflow or
 * invalid fields, and for an empty tensor. */
uint64_t loom_file_tensor_bytes(const struct loom_file_tensor *t);
/* Whether t is a plain tensor with a dimension of 0 (format 1.3): no
 * elements, 0 bytes. */
int loom_file_tensor_empty(const struct loom_file_tensor *t);

/* A kernel step's tensor list (n_in + n_out uint32 in DATA) and its
 * attributes (validated by the parser). */
const uint32_t *loom_file_kernel_io(const struct loom_file *f, const struct loom_file_kernel *k);
const struct loom_file_kattr *loom_file_kernel_attrs(const struct loom_file *f, const struct loom_file_kernel *k);

/* Names of section types ("STRTAB", ...; "?" if unknown) and the record
 * size each section holds (1 for byte sections, 0 for an unknown type). */
const char *loom_section_name(uint32_t type);
uint32_t loom_section_entry_size(uint32_t type);

/* Header field offsets (docs/format.md). */
#define LOOM_FILE_OFF_MAJOR 8
#define LOOM_FILE_OFF_MINOR 10
#define LOOM_FILE_OFF_HEADER_SIZE 12
#define LOOM_FILE_OFF_FILE_SIZE 16
#define LOOM_FILE_OFF_CRC32 24
#define LOOM_FILE_OFF_CONFIG_HASH 28
#define LOOM_FILE_OFF_ISA_VERSION 32
#define LOOM_FILE_OFF_SECTION_COUNT 36
#define LOOM_FILE_OFF_SECTION_TABLE 40
#define LOOM_FILE_OFF_FLAGS 48
#define LOOM_FILE_CRC_START 32      /* crc32 covers [32, file_size) */
#define LOOM_FILE_MAX_SECTIONS 64

/* Why a record is invalid on its own, or NULL when it is valid.  The
 * parser and the assembler share these.  A tensor is checked against the
 * size of its buffer (UINT64_MAX when unknown), a CONST buffer against the
 * size of DATA.  *field gets the byte offset of the offending field inside
 * the record; the text is written to `buf`. */
const char *loom_file_tensor_problem(const struct loom_file_tensor *t, uint64_t buffer_size,
                                     uint32_t *field, char buf[128]);
/* The same for a file of minor version `minor` (from 1.3 every loom_dtype
 * may be stored). */
const char *loom_file_tensor_problem_v(const struct loom_file_tensor *t, uint64_t buffer_size, uint32_t minor,
                                       uint32_t *field, char buf[128]);
const char *loom_file_buffer_problem(const struct loom_file_buffer *b, uint64_t data_size,
                                     uint32_t *field, char buf[128]);

/* Decodes every instruction in INSNS with loom_insn_decode and reports the
 * first illegal one ("model.loom: offset 0x1f0: instruction 3 (job 0,
 * instruction 3 of the job) is illegal: reserved bits set").  The parser
 * leaves instruction bytes alone (the hardware rejects them with ILLEGAL);
 * `loom inspect` and the strict loader call this. */
loom_status loom_file_check_insns(const struct loom_file *f, const char *name,
                                  char msg[LOOM_MSG_MAX]);

/* ---- writer ----
 *
 * The builder collects records and lays the file out when finished: header,
 * section table, then STRTAB, INSNS, DATA, BUFFERS, TENSORS, JOBS, STEPS,
 * HOSTCODE when one was added (the file is then version 1.1, else 1.0),
 * JOBMETA after it when job records were added (version 1.2; HOSTCODE is
 * then written too, empty when there is none), KERNELS after that when
 * kernel records were added or a tensor has a type beyond float32 (version
 * 1.3; the two before it are written, empty if need be), and SIGNATURE last
 * when one was added (version 1.4, the sections before it written, empty if
 * need be).
 * Strings are interned (the same string gets the same offset).  A tensor
 * added with bytes == 0 gets loom_file_tensor_bytes().  When memory runs out
 * the builder remembers it, the adders return all-ones, and finish returns
 * NULL.  loom_file_builder_write validates the bytes with loom_file_parse
 * before writing, so it never writes a file the reader would refuse, and
 * writes atomically (outfile.h): on failure the previous file is intact. */

struct loom_file_builder;

struct loom_file_builder *loom_file_builder_new(uint32_t config_hash);
void loom_file_builder_free(struct loom_file_builder *b);
uint32_t loom_fb_string(struct loom_file_builder *b, const char *s);
/* Appends to DATA (aligned to `align`), returns the offset. */
uint64_t loom_fb_data(struct loom_file_builder *b, const void *bytes, uint64_t size, uint32_t align);
uint32_t loom_fb_insns(struct loom_file_builder *b, const uint8_t *insns, uint32_t count);
uint32_t loom_fb_buffer(struct loom_file_builder *b, const struct loom_file_buffer *buf);
uint32_t loom_fb_tensor(struct loom_file_builder *b, const struct loom_file_tensor *t);
uint32_t loom_fb_job(struct loom_file_builder *b, const struct loom_file_job *j);
uint32_t loom_fb_step(struct loom_file_builder *b, const struct loom_file_step *s);
/* Native host code (docs/hostcode.md): the ELF image and one entry per
 * HOST step it implements; triple and cpu are STRTAB offsets
 * (loom_fb_string), and so are the entries' symbols.  Replaces what an
 * earlier call added.  Returns 0, or -1 when out of memory. */
int loom_fb_hostcode(struct loom_file_builder *b, uint32_t triple, uint32_t cpu,
                     const struct loom_file_hostcode_entry *entries, uint32_t entry_count,
                     const void *image, uint64_t image_size);
/* Adds the SIGNATURE record (replacing an earlier one).  The writer places
 * it last; loom_file_sign() (hostcode_trust.c) fills in its mac. */
void loom_fb_signature(struct loom_file_builder *b, const struct loom_file_signature *s);
/* Appends the JOBMETA record of the next job (records go in job order; a
 * file has none or one per job, which loom_file_builder_write checks). */
uint32_t loom_fb_jobmeta(struct loom_file_builder *b, const struct loom_file_jobmeta *m);
/* Appends a KERNELS record (format 1.3); its index is what a KERNEL step
 * names.  The caller puts the tensor list and attributes into DATA first. */
uint32_t loom_fb_kernel(struct loom_file_builder *b, const struct loom_file_kernel *k);
/* A builder holding every record of a parsed file (STRTAB copied as it is,
 * so name offsets stay valid), to add to it; with its JOBMETA, without its
 * HOSTCODE and SIGNATURE.  NULL when out of memory. */
struct loom_file_builder *loom_file_builder_from(const struct loom_file *f);
/* Serializes (with crc32) into a malloc'd buffer; NULL when out of memory. */
uint8_t *loom_file_builder_finish(struct loom_file_builder *b, size_t *size);
loom_status loom_file_builder_write(struct loom_file_builder *b, const char *path,
                                    char msg[LOOM_MSG_MAX]);

#endif
