/*
 * xrt_linkcheck.c - links every XRT function the "xrt" backend loads at run
 * time (xrt_api.h) against the libxrt_coreutil found at build time, with
 * the types of the XRT headers found at build time.
 *
 * The backend itself never links XRT (it dlopen()s it, so libloom runs on
 * machines without XRT); this program is what proves, in `make test`, that
 * the names and signatures it relies on exist in the installed XRT.  It
 * calls nothing: XRT needs a device for that (docs/xrt.md).
 */
#include <stdio.h>

#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

#include "driver/xrt/xrt_api.h"

struct xrt_fns {
#define FIELD(field, sym) __typeof__(sym) *field;
  LOOM_XRT_FUNCTIONS(FIELD)
#undef FIELD
};

int main(void) {
  static const struct xrt_fns fns = {
#define REF(field, sym) .field = sym,
      LOOM_XRT_FUNCTIONS(REF)
#undef REF
  };
  int n = 0;
#define COUNT(field, sym) n += fns.field != NULL;
  LOOM_XRT_FUNCTIONS(COUNT)
#undef COUNT
  printf("xrt_linkcheck: %d XRT functions resolved in libxrt_coreutil\n", n);
  return 0;
}
