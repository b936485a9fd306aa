/*
 * shale_diff.c -- build/shale-diff, the differential tester for long runs.
 *
 *   shale-diff [--seed S] [--n N] [--engine shale|sqlite|sqlite-other-plans] [--details K]
 *              [--minimize K] [--stop-after K] [--verbose] [--print]
 *
 * Runs N generated statements from seed S on the reference SQLite and on
 * the engine under test (Shale, or SQLite itself to check the generator),
 * prints every difference (the first K in full, with a reproduction script,
 * minimized for the first --minimize of them) and a summary grouped by
 * cause. --print only prints the generated statements. Exit status: 0 when
 * there was no difference, 1 when there were, 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "gen.h"

static void usage(void) {
  fprintf(stderr,
          "usage: shale-diff [--seed S] [--n N] [--engine shale|sqlite|sqlite-other-plans] [--details K]\n"
          "                  [--minimize K] [--stop-after K] [--verbose] [--print]\n");
  exit(2);
}

int main(int argc, char **argv) {
  DiffOptions o = {.seed = 1, .n = 100000, .ref = &diff_engine_sqlite, .max_details = 20,
                   .minimize = 5, .out = stdout};
  const char *engine = diff_engine_shale ? "shale" : "sqlite";
  int print_only = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--verbose")) o.verbose = 1;
    else if (!strcmp(a, "--print")) print_only = 1;
    else if (!v) usage();
    else if (!strcmp(a, "--seed")) o.seed = strtoull(v, NULL, 0), i++;
    else if (!strcmp(a, "--n")) o.n = strtol(v, NULL, 0), i++;
    else if (!strcmp(a, "--engine")) engine = v, i++;
    else if (!strcmp(a, "--details")) o.max_details = atoi(v), i++;
    else if (!strcmp(a, "--minimize")) o.minimize = atoi(v), i++;
    else if (!strcmp(a, "--stop-after")) o.max_diffs = atoi(v), i++;
    else usage();
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
  if (!strcmp(engine, "sqlite")) o.test = &diff_engine_sqlite;
  else if (!strcmp(engine, "sqlite-other-plans")) o.test = &diff_engine_sqlite_other_plans;
  else if (!strcmp(engine, "shale") && diff_engine_shale) o.test = diff_engine_shale;
  else {
    fprintf(stderr, "shale-diff: engine %s is not available\n", engine);
    return 2;
  }
  DiffStats st;
  if (diff_run(&o, &st)) return 2;
  printf("seed %llu, %s vs %s: ", (unsigned long long)o.seed, o.test->name, o.ref->name);
  diff_stats_print(stdout, &st);
  return st.diffs ? 1 : 0;
}
