/*
 * xrt_api.h - the functions of XRT's C API (libxrt_coreutil, XRT 2.13)
 * that libloom's "xrt" backend uses, as one X-macro list:
 * X(field, symbol).
 *
 * driver/lib/backend_xrt.c expands it into a table of function pointers
 * typed by XRT's own headers and filled by dlsym(); driver/xrt/xrt_linkcheck.c
 * expands it into references that the linker must resolve against
 * libxrt_coreutil, so a name or a library that does not match fails the
 * build instead of a user's run.  Include the XRT headers first.
 */
#ifndef LOOM_XRT_API_H
#define LOOM_XRT_API_H

#define LOOM_XRT_FUNCTIONS(X)              \
  X(device_open, xrtDeviceOpen)            \
  X(device_close, xrtDeviceClose)          \
  X(load_xclbin_file, xrtDeviceLoadXclbinFile) \
  X(get_xclbin_uuid, xrtDeviceGetXclbinUUID) \
  X(kernel_open, xrtPLKernelOpenExclusive) \
  X(kernel_close, xrtKernelClose)          \
  X(arg_group, xrtKernelArgGroupId)        \
  X(read_reg, xrtKernelReadRegister)       \
  X(write_reg, xrtKernelWriteRegister)     \
  X(bo_alloc, xrtBOAlloc)                  \
  X(bo_free, xrtBOFree)                    \
  X(bo_map, xrtBOMap)                      \
  X(bo_sync, xrtBOSync)                    \
  X(bo_address, xrtBOAddress)              \
  X(run_open, xrtRunOpen)                  \
  X(run_set_arg, xrtRunSetArg)             \
  X(run_start, xrtRunStart)                \
  X(run_wait_for, xrtRunWaitFor)           \
  X(run_close, xrtRunClose)

#endif
