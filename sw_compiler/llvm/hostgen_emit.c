/*
 * hostgen_emit.c - targets, optimization and object emission.
 *
 * Three targets are supported, named the way Debian names the cross
 * toolchains (the LLVM spelling is accepted too):
 *
 *   x86_64-linux-gnu        x86-64 baseline (SSE2): simulation hosts, Alveo servers
 *   aarch64-linux-gnu       ARMv8-A, NEON: Ultra96, ZCU104, Kria (Cortex-A53)
 *   armv7-linux-gnueabihf   ARMv7-A, hard-float, VFPv3 + NEON: PYNQ (Cortex-A9)
 *
 * The default is the machine the compiler runs on.  The CPU defaults to a
 * baseline every board of that family has, because the runtime can check
 * the ELF machine of the code but not the CPU features it uses; --host-cpu
 * is the user's promise that the board has more.
 *
 * Code is position-independent (it becomes a shared object), optimized
 * with LLVM's default<O3> (or O1/O2) pipeline with loop and SLP
 * vectorization, and emitted as an ELF relocatable object in memory.
 */
#include "sw_compiler/llvm/hostgen_int.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdlib.h>
#include <string.h>

struct known_target {
  const char *arch;      /* first component of the triple */
  const char *triple;    /* canonical */
  const char *cpu;       /* baseline */
  const char *features;
};

static const struct known_target targets[] = {
    {"x86_64", "x86_64-unknown-linux-gnu", "x86-64", ""},
    {"aarch64", "aarch64-unknown-linux-gnu", "generic", "+neon"},
    {"arm64", "aarch64-unknown-linux-gnu", "generic", "+neon"},
    {"armv7", "armv7-unknown-linux-gnueabihf", "cortex-a9", "+neon,+vfp3,-thumb-mode"},
    {"armv7a", "armv7-unknown-linux-gnueabihf", "cortex-a9", "+neon,+vfp3,-thumb-mode"},
    {"arm", "armv7-unknown-linux-gnueabihf", "cortex-a9", "+neon,+vfp3,-thumb-mode"},
    {"armhf", "armv7-unknown-linux-gnueabihf", "cortex-a9", "+neon,+vfp3,-thumb-mode"},
};

static void init_llvm(void) {
  /* Idempotent registrations inside LLVM, not state of ours. */
  LLVMInitializeX86TargetInfo(), LLVMInitializeX86Target(), LLVMInitializeX86TargetMC(), LLVMInitializeX86AsmPrinter();
  LLVMInitializeAArch64TargetInfo(), LLVMInitializeAArch64Target(), LLVMInitializeAArch64TargetMC(),
      LLVMInitializeAArch64AsmPrinter();
  LLVMInitializeARMTargetInfo(), LLVMInitializeARMTarget(), LLVMInitializeARMTargetMC(), LLVMInitializeARMAsmPrinter();
}

/* "x86_64-pc-linux-gnu" -> the x86_64 entry.  Only Linux with glibc's ABI
 * (gnu / gnueabihf) is accepted: that is what the runtime loads. */
static const struct known_target *find_target(const char *triple) {
  size_t n = strcspn(triple, "-");
  const char *env = strrchr(triple, '-');
  if (!strstr(triple, "linux") || !env) return NULL;
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    const struct known_target *k = &targets[i];
    if (strlen(k->arch) != n || strncmp(triple, k->arch, n)) continue;
    int hf = !strcmp(env, "-gnueabihf");
    if (strstr(k->triple, "gnueabihf") ? hf : !strcmp(env, "-gnu")) return k;
  }
  return NULL;
}

int hg_target_open(const struct hostgen_options *o, struct hg_target *t, struct ir_error *err) {
  memset(t, 0, sizeof *t);
  init_llvm();
  char *host = LLVMGetDefaultTargetTriple();
  const char *want = o && o->triple && strcmp(o->triple, "host") ? o->triple : host;
  const struct known_target *k = find_target(want);
  if (!k) {
    ir_errorf(err, "--host-triple: '%s' is not a supported host (x86_64-linux-gnu, aarch64-linux-gnu, "
              "armv7-linux-gnueabihf)", want);
    LLVMDisposeMessage(host);
    return -1;
  }
  LLVMDisposeMessage(host);
  snprintf(t->triple, sizeof t->triple, "%s", k->triple);
  snprintf(t->cpu, sizeof t->cpu, "%s", o && o->cpu ? o->cpu : k->cpu);
  snprintf(t->features, sizeof t->features, "%s", k->features);
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(t->triple, &target, &msg)) {
    ir_errorf(err, "--host-triple: LLVM has no target for '%s': %s", t->triple, msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return -1;
  }
  t->tm = LLVMCreateTargetMachine(target, t->triple, t->cpu, t->features, LLVMCodeGenLevelAggressive,
                                  LLVMRelocPIC, LLVMCodeModelDefault);
  if (!t->tm) return ir_errorf(err, "--host-cpu: LLVM cannot build code for cpu '%s' of %s", t->cpu, t->triple), -1;
  return 0;
}

void hg_target_close(struct hg_target *t) {
  if (t->tm) LLVMDisposeTargetMachine(t->tm);
  memset(t, 0, sizeof *t);
}

static int optimize(struct hg_target *t, LLVMModuleRef m, int level, struct ir_error *err) {
  char pipeline[32];
  snprintf(pipeline, sizeof pipeline, "default<O%d>", level);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(po, level >= 2);
  LLVMPassBuilderOptionsSetSLPVectorization(po, level >= 2);
  LLVMPassBuilderOptionsSetLoopUnrolling(po, level >= 2);
  LLVMPassBuilderOptionsSetLoopInterleaving(po, level >= 2);
  LLVMErrorRef e = LLVMRunPasses(m, pipeline, t->tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (!e) return 0;
  char *msg = LLVMGetErrorMessage(e);
  ir_errorf(err, "LLVM optimization failed: %s", msg);
  LLVMDisposeErrorMessage(msg);
  return -1;
}

int hg_emit_object(struct hg_target *t, LLVMModuleRef m, int opt_level, uint8_t **obj,
                   size_t *obj_size, struct ir_error *err) {
  char *msg = NULL;
  *obj = NULL;
  if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
    /* a builder made invalid IR: a bug in Loom, never the model's fault */
    ir_errorf(err, "internal error: hostgen built invalid LLVM IR: %.900s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return -1;
  }
  LLVMDisposeMessage(msg);
  if (opt_level > 0 && optimize(t, m, opt_level > 3 ? 3 : opt_level, err)) return -1;
  LLVMMemoryBufferRef buf;
  if (LLVMTargetMachineEmitToMemoryBuffer(t->tm, m, LLVMObjectFile, &msg, &buf)) {
    ir_errorf(err, "LLVM code generation for %s failed: %s", t->triple, msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return -1;
  }
  *obj_size = LLVMGetBufferSize(buf);
  *obj = ir_xmalloc(*obj_size + 1);
  memcpy(*obj, LLVMGetBufferStart(buf), *obj_size);
  LLVMDisposeMemoryBuffer(buf);
  return 0;
}
