/*
 * compile_trigger.c -- placeholder until the dml part lands (see compile.h for the
 * contract). Every function here records "not supported yet" and returns.
 */
#include "compile.h"

void trigger_code(Parse *p, const Table *tab, int op, int timing, const uint8_t *changed,
                  int old_reg, int new_reg, int on_conflict, int on_ignore) {
  parse_error(p, "triggers are not supported yet");
}
int trigger_exists(Parse *p, const Table *tab, int op, int timing) { return 0; }
