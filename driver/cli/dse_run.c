/*
 * dse_run.c - evaluating a sweep's points: here, `--jobs` at a time, or as
 * the tasks of a Slurm job array; and gathering the results.
 *
 * Locally, each point runs in a child process (fork), so points run in
 * parallel without threads in the compiler or the runtime, and a crash in
 * one point cannot take the sweep down: the parent records it as a failed
 * point.  A point whose result file exists and is current (same digest) is
 * skipped, which is what makes a re-run cheap and an interrupted one
 * resume.  Progress goes to stderr, one line per finished point, with an
 * ETA from the mean time of the points evaluated so far.
 *
 * On Slurm (--slurm), loom writes OUT/slurm/job.sh, an sbatch array of
 * ceil(valid points / chunk) tasks, each running this same loom with
 * `--task I` on the same spec, and submits it with sbatch.  OUT must be on
 * a directory every node sees.  `--collect` then reads the result files
 * exactly as the end of a local run does, so both give the same outputs;
 * while a point is missing or stale, collect reports how many and writes
 * nothing.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "driver/lib/srctree.h"
#include "dse.h"
#include "loom/loom.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Evaluates and records a point (in a child); its exit status. */
static int eval_and_write(const struct dse_spec *s, const struct dse_point *p) {
  struct dse_result *r = calloc(1, sizeof *r);
  if (!r) return 1;
  dse_eval_point(s, p, r);
  int rc = dse_result_write(s, r) ? 1 : r->status == DSE_FAILED ? 2 : 0;
  if (rc == 1) fprintf(stderr, "loom: %s/points: cannot write the result of %s\n", s->out, r->name);
  free(r);
  return rc;
}

/* A failed child leaves no result; record that it failed. */
static void record_crash(const struct dse_spec *s, const struct dse_point *p, int status) {
  struct dse_result r;
  memset(&r, 0, sizeof r);
  r.cfg = p->cfg;
  dse_point_id(&p->cfg, r.name, sizeof r.name);
  r.status = DSE_FAILED;
  if (WIFSIGNALED(status)) snprintf(r.error, sizeof r.error, "evaluation died of signal %d", WTERMSIG(status));
  else snprintf(r.error, sizeof r.error, "evaluation exited with status %d", WEXITSTATUS(status));
  dse_result_write(s, &r);
}

static int has_result(const struct dse_spec *s, const struct dse_point *p) {
  char id[64];
  struct dse_result *r = malloc(sizeof *r);
  dse_point_id(&p->cfg, id, sizeof id);
  int ok = r && dse_result_read(s, id, r) == 0 && r->status != DSE_FAILED;
  free(r);
  return ok;
}

struct progress {
  int todo, done, failed, jobs;
  double t0, busy; /* wall time of the finished points */
};

static void report(const struct dse_spec *s, struct progress *g, const struct dse_point *p,
                   int status, double secs, int quiet) {
  char id[64], eta[32];
  struct dse_result r;
  g->done++, g->busy += secs;
  dse_point_id(&p->cfg, id, sizeof id);
  int have = dse_result_read(s, id, &r) == 0;
  if (!have || r.status == DSE_FAILED) g->failed++;
  if (quiet) return;
  double left = (g->todo - g->done) * (g->busy / g->done) / g->jobs;
  if (left < 120) snprintf(eta, sizeof eta, "%.0f s", left);
  else snprintf(eta, sizeof eta, "%.0f min", left / 60);
  fprintf(stderr, "loom dse: [%d/%d] %s %dx%dx%d: %s in %.1f s; ETA %s\n", g->done, g->todo, id,
          p->cfg.batch, p->cfg.block_in, p->cfg.block_out, have ? dse_status_names[r.status] : "no result",
          secs, eta);
  if (have && r.error[0]) fprintf(stderr, "loom dse:   %s\n", r.error);
}

struct child {
  pid_t pid;
  int point;
  double t0;
};

static int wait_one(const struct dse_spec *s, const struct dse_point *pts, struct child *kids,
                    int *running, struct progress *g, int quiet) {
  int status;
  pid_t pid = wait(&status);
  if (pid < 0) return -1;
  for (int k = 0; k < *running; k++) {
    if (kids[k].pid != pid) continue;
    const struct dse_point *p = &pts[kids[k].point];
    if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 1)) record_crash(s, p, status);
    report(s, g, p, status, now() - kids[k].t0, quiet);
    kids[k] = kids[--*running];
    return 0;
  }
  return 0;
}

int dse_run_local(const struct dse_spec *s, const struct dse_point *pts, int n,
                  const struct dse_run_options *o) {
  struct progress g = {.jobs = o->jobs > 0 ? o->jobs : 1, .t0 = now()};
  int *todo = calloc((size_t)n + 1, sizeof *todo), running = 0;
  struct child *kids = calloc((size_t)g.jobs, sizeof *kids);
  if (!todo || !kids) return free(todo), free(kids), cli_error("out of memory"), -1;
  /* one point per core first: the same core at other clocks then copies
   * its cycles and resources (dse_eval.c) instead of computing them */
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n; i++) {
      int first = 1;
      for (int j = 0; j < i && first; j++) first = strcmp(pts[j].cfg.name, pts[i].cfg.name) != 0;
      if (first == !pass && pts[i].valid && !has_result(s, &pts[i])) todo[g.todo++] = i;
    }
  if (!o->quiet)
    fprintf(stderr, "loom dse: %d points, %d to evaluate (%d done before), %d at a time\n", n, g.todo,
            n - g.todo, g.jobs);
  fflush(stdout);
  for (int next = 0; next < g.todo || running;) {
    if (next < g.todo && running < g.jobs) {
      pid_t pid = fork();
      if (pid == 0) _exit(eval_and_write(s, &pts[todo[next]]));
      if (pid < 0) break;
      kids[running++] = (struct child){pid, todo[next++], now()};
      continue;
    }
    if (wait_one(s, pts, kids, &running, &g, o->quiet)) break;
  }
  for (int i = 0; i < n; i++) /* invalid points get a result too: they are part of the sweep */
    if (!pts[i].valid && !has_result(s, &pts[i])) eval_and_write(s, &pts[i]);
  free(todo);
  free(kids);
  return g.failed;
}

/* ---- Slurm ---- */

static int valid_count(const struct dse_point *pts, int n) {
  int v = 0;
  for (int i = 0; i < n; i++) v += pts[i].valid;
  return v;
}

int dse_run_task(const struct dse_spec *s, const struct dse_point *pts, int n, int task, int chunk) {
  int first = task * chunk, seen = 0, failed = 0, ran = 0;
  if (task < 0 || chunk < 1 || first >= valid_count(pts, n)) {
    fprintf(stderr, "loom: --task %d: the sweep has %d valid points (%d per task)\n", task,
            valid_count(pts, n), chunk);
    return -1;
  }
  for (int i = 0; i < n && seen < first + chunk; i++) {
    if (!pts[i].valid || seen++ < first) continue;
    if (has_result(s, &pts[i])) continue;
    ran++;
    failed += eval_and_write(s, &pts[i]) != 0;
  }
  fprintf(stderr, "loom dse: task %d: %d points evaluated, %d failed\n", task, ran, failed);
  return failed;
}

/* The path of this loom, for the job script. */
static int self_path(char *out, size_t n) {
  ssize_t len = readlink("/proc/self/exe", out, n - 1);
  if (len <= 0) return -1;
  out[len] = '\0';
  return 0;
}

static int write_job(const struct dse_spec *s, const char *spec, int tasks, int chunk,
                     const char *partition, const char *account, const char *time_limit, char *job,
                     size_t jn) {
  char dir[DSE_PATH_MAX + 16], loom[DSE_PATH_MAX], cwd[DSE_PATH_MAX], *text = NULL;
  size_t len = 0;
  snprintf(dir, sizeof dir, "%s/slurm", s->out);
  snprintf(job, jn, "%s/job.sh", dir);
  if (self_path(loom, sizeof loom) || !getcwd(cwd, sizeof cwd) || loom_mkdirs(dir)) return -1;
  FILE *f = open_memstream(&text, &len);
  if (!f) return -1;
  fprintf(f, "#!/bin/sh\n# loom dse %s as a Slurm job array (written by loom dse --slurm; docs/dse.md)\n", spec);
  fprintf(f, "#SBATCH --job-name=loom-dse\n#SBATCH --array=0-%d\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n", tasks - 1);
  fprintf(f, "#SBATCH --output=%s/task-%%a.log\n", dir);
  if (partition) fprintf(f, "#SBATCH --partition=%s\n", partition);
  if (account) fprintf(f, "#SBATCH --account=%s\n", account);
  if (time_limit) fprintf(f, "#SBATCH --time=%s\n", time_limit);
  fprintf(f, "cd '%s' || exit 1\n", cwd);
  fprintf(f, "exec '%s' dse '%s' --out '%s' --task \"$SLURM_ARRAY_TASK_ID\" --chunk %d\n", loom, spec, s->out, chunk);
  fclose(f);
  int rc = dse_write_file(job, text, len);
  free(text);
  return rc;
}

/* Runs argv with stdout captured into out[n]; the exit status, or -1 when
 * it cannot be run at all (errno set). */
static int capture(char *const argv[], char *out, size_t n) {
  int fd[2];
  if (pipe(fd)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1), dup2(fd[1], 2);
    close(fd[0]), close(fd[1]);
    execvp(argv[0], argv);
    _exit(127);
  }
  close(fd[1]);
  size_t len = 0;
  ssize_t got;
  while (pid > 0 && (got = read(fd[0], out + len, n - 1 - len)) > 0) len += (size_t)got;
  out[len] = '\0';
  close(fd[0]);
  int status;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int dse_slurm_submit(const struct dse_spec *s, const char *spec, const struct dse_point *pts, int n,
                     int chunk, const char *partition, const char *account, const char *time_limit) {
  char job[DSE_PATH_MAX + 32], out[4096];
  int tasks = (valid_count(pts, n) + chunk - 1) / chunk;
  if (write_job(s, spec, tasks, chunk, partition, account, time_limit, job, sizeof job))
    return cli_error("%s/slurm: cannot write the job script", s->out), -1;
  for (int i = 0; i < n; i++) /* invalid points are recorded here, not by a task */
    if (!pts[i].valid && !has_result(s, &pts[i])) eval_and_write(s, &pts[i]);
  char *argv[] = {"sbatch", "--parsable", job, NULL};
  int rc = capture(argv, out, sizeof out);
  out[strcspn(out, "\n")] = '\0';
  if (rc == 127 || rc < 0)
    return cli_error("--slurm: cannot run sbatch (is Slurm's client installed and on PATH?)"), -1;
  if (rc != 0) return cli_error("--slurm: sbatch %s failed: %s", job, out[0] ? out : "no message"), -1;
  printf("submitted Slurm job %s: %d tasks of %d points (%s); collect with: loom dse %s --out %s --collect\n",
         out, tasks, chunk, job, spec, s->out);
  return 0;
}

int dse_collect(const struct dse_spec *s, const struct dse_point *pts, int n, struct dse_result **out) {
  struct dse_result *r = calloc((size_t)n, sizeof *r);
  int missing = 0;
  const char *first = NULL;
  char id[64];
  if (!r) return cli_error("out of memory"), -1;
  for (int i = 0; i < n; i++) {
    dse_point_id(&pts[i].cfg, id, sizeof id);
    if (dse_result_read(s, id, &r[i]) == 0) continue;
    if (!missing++) first = pts[i].cfg.name;
  }
  if (missing) {
    free(r);
    fprintf(stderr, "loom: %s: %d of %d points have no current result yet (first: %s); nothing reported\n",
            s->out, missing, n, first);
    return -1;
  }
  *out = r;
  return 0;
}
