/*
 * kernel_stub.c - a placeholder for the kernel registry until
 * kernel_registry.c (the host kernels, developed on another branch) is
 * merged: no op has a kernel, so every host step of a generic op refuses
 * with LOOM_E_UNSUPPORTED "no kernel for op X".
 *
 * Both functions are weak.  kernel_registry.o sorts before this file in
 * libloom_core.a, so once it is there the linker takes its definitions and
 * never loads this object; delete this file when the registry lands.
 */
#include <stdio.h>

#include "kernel.h"

__attribute__((weak)) const struct loom_kernel *loom_kernel_find(const char *op) {
  (void)op;
  return NULL;
}

__attribute__((weak)) loom_status loom_kernel_run(const struct loom_kcall *c) {
  snprintf(c->msg, LOOM_MSG_MAX, "no kernel for op %s", c->op);
  return LOOM_E_UNSUPPORTED;
}
