/*
 * shale_diff.c -- build/shale-diff, the differential tester for long runs.
 *
 *   shale-diff [--seed S] [--n N] [--engine shale|sqlite|sqlite-other-plans] [--details K]
 *              [--minimize K] [--stop-after K] [--verbose] [--print] [--eqp | --eqp-show]
 *   shale-diff [--engine E] [--verbose] --replay FILE
 *
 * Runs N generated statements from seed S on the reference SQLite and on
 * the engine under test (Shale, or SQLite itself to check the generator),
 * prints every difference (the first K in full, with a reproduction script,
 * minimized for the first --minimize of them) and a summary grouped by
 * cause. --eqp also runs EXPLAIN QUERY PLAN of every query both engines
 * answered and reports the share whose plan text equals the reference's
 * (--eqp-show prints those that differ). --print only prints the generated statements; --replay
 * FILE runs a reproduction script (as printed in a report) on both engines and shows every
 * statement's results side by side. Exit status: 0 when there was no difference, 1 when there were,
 * 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "gen.h"

/* --replay FILE: run the ;-terminated statements of FILE (a script printed
 * by a report) on both engines and print each result, marking those that
 * differ (compared as multisets). */
static int replay(const DiffOptions *o, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 2;
  }
  size_t cap = 1 << 16, n = 0;
  char *text = malloc(cap);
  for (size_t k; text && (k = fread(text + n, 1, cap - n - 1, f)) > 0;) {
    n += k;
    if (n + 1 == cap) text = realloc(text, cap *= 2);
  }
  fclose(f);
  if (!text) return 2;
  text[n] = 0;
  void *hr = o->ref->open(), *ht = o->test->open();
  if (!hr || !ht) return 2;
  DiffResult a, b;
  diff_result_init(&a);
  diff_result_init(&b);
  int differ = 0;
  /* Statements end at a ';' outside quotes; "--" comments run to the end
   * of their line. */
  char *p = text;
  while (*p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    if (p[0] == '-' && p[1] == '-') {
      while (*p && *p != '\n') p++;
      continue;
    }
    if (!*p) break;
    char *end = p, q = 0;
    for (; *end && (q || *end != ';'); end++)
      if (*end == '\'' || *end == '"') q = q == *end ? 0 : q ? q : *end;
    char save = *end;
    *end = 0;
    for (char *t = end; t > p && (t[-1] == ' ' || t[-1] == '\n' || t[-1] == '\r');) *--t = 0;
    diff_result_reset(&a);
    diff_result_reset(&b);
    o->ref->query(hr, p, &a);
    o->test->query(ht, p, &b);
    if (strncmp(p, "INSERT", 6) && strncmp(p, "UPDATE", 6) && strncmp(p, "DELETE", 6))
      a.changes = b.changes = 0; /* stale after anything but a write */
    char why[160];
    int d = diff_compare(&a, &b, DIFF_CMP_BAG, 0, why, sizeof why);
    differ |= d;
    printf("%s %s\n", d ? "DIFFERS:" : "same:", p);
    if (d || o->verbose) {
      printf("  %s:\n", o->ref->name);
      diff_result_print(stdout, &a, 50);
      printf("  %s:\n", o->test->name);
      diff_result_print(stdout, &b, 50);
    }
    if (!save) break;
    p = end + 1;
  }
  diff_result_free(&a);
  diff_result_free(&b);
  o->ref->close(hr);
  o->test->close(ht);
  free(text);
  return differ;
}

static void usage(void) {
  fprintf(stderr,
          "usage: shale-diff [--seed S] [--n N] [--engine shale|sqlite|sqlite-other-plans] "
          "[--details K]\n"
          "                  [--minimize K] [--stop-after K] [--verbose] [--print] [--eqp | "
          "--eqp-show]\n"
          "       shale-diff [--engine E] [--verbose] --replay FILE\n");
  exit(2);
}

int main(int argc, char **argv) {
  DiffOptions o = {.seed = 1,
                   .n = 100000,
                   .ref = &diff_engine_sqlite,
                   .max_details = 20,
                   .minimize = 5,
                   .out = stdout};
  const char *engine = diff_engine_shale ? "shale" : "sqlite";
  int print_only = 0;
  const char *replay_file = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--verbose"))
      o.verbose = 1;
    else if (!strcmp(a, "--print"))
      print_only = 1;
    else if (!strcmp(a, "--eqp"))
      o.eqp = 1;
    else if (!strcmp(a, "--eqp-show"))
      o.eqp = 2;
    else if (!v)
      usage();
    else if (!strcmp(a, "--seed"))
      o.seed = strtoull(v, NULL, 0), i++;
    else if (!strcmp(a, "--n"))
      o.n = strtol(v, NULL, 0), i++;
    else if (!strcmp(a, "--engine"))
      engine = v, i++;
    else if (!strcmp(a, "--replay"))
      replay_file = v, i++;
    else if (!strcmp(a, "--details"))
      o.max_details = atoi(v), i++;
    else if (!strcmp(a, "--minimize"))
      o.minimize = atoi(v), i++;
    else if (!strcmp(a, "--stop-after"))
      o.max_diffs = atoi(v), i++;
    else
      usage();
  }
  if (print_only) {
    DiffGen *g = gen_new(o.seed);
    if (!g) return 2;
    for (long i = 0; i < o.n; i++) {
      GenStmt st;
      gen_next(g, &st);
      if (st.new_round) printf("-- round (fresh database)\n");
      printf("%s;\n", st.sql);
    }
    gen_free(g);
    return 0;
  }
  if (!strcmp(engine, "sqlite"))
    o.test = &diff_engine_sqlite;
  else if (!strcmp(engine, "sqlite-other-plans"))
    o.test = &diff_engine_sqlite_other_plans;
  else if (!strcmp(engine, "shale") && diff_engine_shale)
    o.test = diff_engine_shale;
  else {
    fprintf(stderr, "shale-diff: engine %s is not available\n", engine);
    return 2;
  }
  if (replay_file) return replay(&o, replay_file);
  DiffStats st;
  if (diff_run(&o, &st)) return 2;
  printf("seed %llu, %s vs %s: ", (unsigned long long)o.seed, o.test->name, o.ref->name);
  diff_stats_print(stdout, &st);
  return st.diffs ? 1 : 0;
}
