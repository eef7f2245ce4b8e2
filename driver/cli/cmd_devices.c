/*
 * cmd_devices.c - `loom devices`: the backends compiled into this loom and
 * what each can open here.
 *
 * A backend is asked to open every configuration (option config=NAME); the
 * ones it opens are listed with their hash.  When it opens none, its answer
 * to a plain open (no options) is shown: the configuration of the hardware
 * it found, or "not available: <why>".
 */
#include <string.h>

#include "cli.h"
#include "loom/loom.h"

static void show(const char *backend, const loom_device *dev) {
  const struct loom_hw_config *c = loom_device_config(dev);
  printf("  %-8s config %-8s hash 0x%08X  %dx%dx%d\n", backend, c->name, c->hash, c->batch,
         c->block_in, c->block_out);
}

/* Opens `backend` with `options`; prints and returns 1 on success. */
static int try_open(const char *backend, const char *options, char msg[LOOM_MSG_MAX]) {
  loom_device *dev = NULL;
  if (loom_device_open(backend, options, &dev, msg) != LOOM_OK) return 0;
  show(backend, dev);
  loom_device_close(dev);
  return 1;
}

static void list_backend(const char *backend) {
  char msg[LOOM_MSG_MAX] = "", first[LOOM_MSG_MAX] = "";
  int opened = 0;
  for (int i = 0; i < LOOM_CONFIG_COUNT; i++) {
    char options[16 + LOOM_HW_NAME_MAX];
    snprintf(options, sizeof options, "config=%.*s", LOOM_HW_NAME_MAX - 1, loom_hw_configs[i].name);
    if (try_open(backend, options, msg)) opened++;
    else if (!first[0]) snprintf(first, sizeof first, "%s", msg);
  }
  if (opened || try_open(backend, NULL, msg)) return;
  printf("  %-8s not available: %s\n", backend, msg[0] ? msg : first);
}

static int run_devices(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      cli_print_help(&cli_cmd_devices, stdout);
      return CLI_OK;
    }
    if (argv[i][0] == '-') return cli_usage_error(&cli_cmd_devices, "unknown option '%s'", argv[i]);
    return cli_usage_error(&cli_cmd_devices, "unexpected argument '%s'", argv[i]);
  }
  printf("backends:\n");
  for (const char *const *b = loom_backend_names(); *b; b++) list_backend(*b);
  return CLI_OK;
}

const struct cli_cmd cli_cmd_devices = {
    .name = "devices",
    .summary = "list the backends and the configurations they can open here",
    .help = "usage: loom devices\n"
            "\n"
            "Lists the backends compiled into this loom.  For each, every hardware\n"
            "configuration it can open here is shown with its hash and GEMM shape\n"
            "(fsim opens them all); a backend that opens nothing is shown as\n"
            "'not available' with the reason.\n",
    .run = run_devices,
};
