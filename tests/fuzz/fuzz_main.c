/*
 * fuzz_main.c - replays inputs through a fuzz target without libFuzzer.
 *
 *   replay_npy FILE|DIR...
 *
 * Every regular file named (directories: every file inside, sorted) is read
 * and passed to LLVMFuzzerTestOneInput once.  A property violation or a
 * sanitizer report aborts the program, so the exit status says whether
 * every input passed.  Built with the ordinary compiler and, under
 * `make SAN=1`, with ASan and UBSan; CI runs it over the seed corpora and
 * tests/regress/.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open\n", path);
    return -1;
  }
  size_t cap = 4096, n = 0, got;
  uint8_t *buf = malloc(cap);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf) return -1;
  /* A tight copy, so a read past the input is a heap overflow. */
  uint8_t *exact = malloc(n ? n : 1);
  memcpy(exact, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static int replay_dir(const char *dir, int *count) {
  struct dirent **list;
  int n = scandir(dir, &list, NULL, by_name), rc = 0;
  if (n < 0) return -1;
  for (int i = 0; i < n; i++) {
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name);
    if (list[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      if (replay_file(path)) rc = -1;
      else (*count)++;
    }
    free(list[i]);
  }
  free(list);
  return rc;
}

int main(int argc, char **argv) {
  int count = 0, rc = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "%s: no such file or directory\n", argv[i]);
      rc = 1;
    } else if (S_ISDIR(st.st_mode)) {
      if (replay_dir(argv[i], &count)) rc = 1;
    } else if (replay_file(argv[i])) {
      rc = 1;
    } else {
      count++;
    }
  }
  printf("%s: %d inputs replayed\n", argv[0], count);
  return rc;
}
