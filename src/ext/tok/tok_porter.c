/*
 * tok_porter.c -- the Porter stemming algorithm (M. F. Porter, "An
 * algorithm for suffix stripping", 1980, with the published revisions
 * bli->ble and logi->log) as SQLite's porter tokenizers apply it: FTS5's
 * to each token of a parent tokenizer (fts5/fts5_tok.c), FTS3's to the
 * tokens of its simple tokenizer (fts3/fts3_tok.c):
 *  - tokens shorter than 3 or longer than 64 bytes pass unchanged;
 *  - letters are bytes: a, e, i, o, u are vowels, y is one after a
 *    consonant (in *v*, anywhere but at the start), every other byte
 *    (UTF-8 included) a consonant;
 *  - m is the number of vowel-consonant sequences of the stem;
 *  - in each step the rules are tried in order and the first whose suffix
 *    ends the word (leaving a non-empty stem) decides: it applies if its
 *    condition holds, else the step leaves the word alone;
 *  - step 1a: sses -> ss (longer than 4), ies -> i (longer than 3), ss
 *    unchanged, any other final s dropped.
 * FTS3's variant differs in two ways: the suffixes of steps 1a and 1b's
 * first rules may be the whole word ("sses" -> "ss", "ies" -> "i", "eed"
 * kept), and step 1b's double consonant test reads a y as a vowel after a
 * consonant (FTS5's always as a consonant: "ayyed" -> "ayi", FTS5 "ai").
 *
 * Invariants: the stemmed text never grows past the token plus one byte
 * (PORTER_MAX + 8 bytes of buffer); offsets are the parent's.
 */
#include <string.h>

#include "tok.h"

#define PORTER_MAX 64

static int is_vowel(char c, int y_vowel) {
  return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || (y_vowel && c == 'y');
}

/* Past the first vowel-consonant sequence of z[0..n) (prev_cons: the byte
 * before z was a consonant): the offset after it, 0 if there is none. */
static int gobble_vc(const char *z, int n, int prev_cons) {
  int i, cons = prev_cons;
  for (i = 0; i < n; i++)
    if (!(cons = !is_vowel(z[i], cons))) break;
  for (i++; i < n; i++)
    if ((cons = !is_vowel(z[i], cons))) return i + 1;
  return 0;
}

static int m_gt0(const char *z, int n) { return gobble_vc(z, n, 0) != 0; }

static int m_gt1(const char *z, int n) {
  int k = gobble_vc(z, n, 0);
  return k && gobble_vc(z + k, n - k, 1);
}

static int m_eq1(const char *z, int n) {
  int k = gobble_vc(z, n, 0);
  return k && !gobble_vc(z + k, n - k, 1);
}

/* *o: the stem ends consonant-vowel-consonant, the last not w, x or y. */
static int ends_cvc(const char *z, int n) {
  char last = z[n - 1];
  if (last == 'w' || last == 'x' || last == 'y') return 0;
  int mask = 0, cons = 0;
  for (int i = 0; i < n; i++) {
    cons = !is_vowel(z[i], cons);
    mask = (mask << 1) | cons;
  }
  return (mask & 7) == 5;
}

/* *v*: the stem holds a vowel. */
static int has_vowel(const char *z, int n) {
  for (int i = 0; i < n; i++)
    if (is_vowel(z[i], i > 0)) return 1;
  return 0;
}

static int m_gt1_st(const char *z, int n) {
  return n > 0 && (z[n - 1] == 's' || z[n - 1] == 't') && m_gt1(z, n);
}

typedef int (*Cond)(const char *z, int n);

typedef struct Rule {
  const char *suffix, *repl;
  Cond cond;
} Rule;

static const Rule step2[] = {
    {"ational", "ate", m_gt0}, {"tional", "tion", m_gt0}, {"enci", "ence", m_gt0},
    {"anci", "ance", m_gt0},   {"izer", "ize", m_gt0},    {"logi", "log", m_gt0},
    {"bli", "ble", m_gt0},     {"alli", "al", m_gt0},     {"entli", "ent", m_gt0},
    {"eli", "e", m_gt0},       {"ousli", "ous", m_gt0},   {"ization", "ize", m_gt0},
    {"ation", "ate", m_gt0},   {"ator", "ate", m_gt0},    {"alism", "al", m_gt0},
    {"iveness", "ive", m_gt0}, {"fulness", "ful", m_gt0}, {"ousness", "ous", m_gt0},
    {"aliti", "al", m_gt0},    {"iviti", "ive", m_gt0},   {"biliti", "ble", m_gt0},
    {NULL, NULL, NULL}};

static const Rule step3[] = {{"ical", "ic", m_gt0},  {"ness", "", m_gt0}, {"icate", "ic", m_gt0},
                             {"iciti", "ic", m_gt0}, {"ful", "", m_gt0},  {"ative", "", m_gt0},
                             {"alize", "al", m_gt0}, {NULL, NULL, NULL}};

static const Rule step4[] = {
    {"al", "", m_gt1},    {"ance", "", m_gt1}, {"ence", "", m_gt1}, {"er", "", m_gt1},
    {"ic", "", m_gt1},    {"able", "", m_gt1}, {"ible", "", m_gt1}, {"ant", "", m_gt1},
    {"ement", "", m_gt1}, {"ment", "", m_gt1}, {"ent", "", m_gt1},  {"ion", "", m_gt1_st},
    {"ou", "", m_gt1},    {"ism", "", m_gt1},  {"ate", "", m_gt1},  {"iti", "", m_gt1},
    {"ous", "", m_gt1},   {"ive", "", m_gt1},  {"ize", "", m_gt1},  {NULL, NULL, NULL}};

/* m0: the shortest stem a rule leaves (1 FTS5, 0 FTS3). */
static int ends_with(const char *z, int n, const char *suffix, int k, int m0) {
  return n >= k + m0 && !memcmp(z + n - k, suffix, (size_t)k);
}

/* The first rule of rules whose suffix ends z: applied if its condition
 * holds. Returns 1 when a rule applied. */
static int apply_rules(char *z, int *n, const Rule *rules, int m0) {
  for (const Rule *r = rules; r->suffix; r++) {
    int k = (int)strlen(r->suffix);
    if (!ends_with(z, *n, r->suffix, k, m0)) continue;
    if (!r->cond(z, *n - k)) return 0;
    int nr = (int)strlen(r->repl);
    memcpy(z + *n - k, r->repl, (size_t)nr);
    *n = *n - k + nr;
    return 1;
  }
  return 0;
}

static void step1a(char *z, int *n, int m0) {
  int k = *n;
  if (z[k - 1] != 's') return;
  if (z[k - 2] == 'e') {
    int two =
        (k >= 4 + m0 && z[k - 4] == 's' && z[k - 3] == 's') || (k >= 3 + m0 && z[k - 3] == 'i');
    *n = two ? k - 2 : k - 1;
  } else if (z[k - 2] != 's') {
    *n = k - 1;
  }
}

static int cond_true(const char *z, int n) {
  (void)z;
  (void)n;
  return 1;
}

/* Whether z[i] is a consonant, y read by its context (FTS3). */
static int consonant_at(const char *z, int i) {
  int cons = 0;
  for (int k = 0; k <= i; k++) cons = !is_vowel(z[k], cons);
  return cons;
}

/* Step 1b: eed -> ee (m > 0), else ed / ing dropped when the stem has a
 * vowel, then at -> ate, bl -> ble, iz -> ize, or a double consonant
 * (not l, s, z) undoubled, or an e added to an m = 1 *o stem. */
static void step1b(char *z, int *n, int m0) {
  static const Rule eed[] = {
      {"eed", "ee", m_gt0}, {"ed", "", has_vowel}, {"ing", "", has_vowel}, {NULL, NULL, NULL}};
  static const Rule fix[] = {{"at", "ate", cond_true},
                             {"bl", "ble", cond_true},
                             {"iz", "ize", cond_true},
                             {NULL, NULL, NULL}};
  int k = *n;
  if (!apply_rules(z, n, eed, m0) || (k > 3 && !memcmp(z + k - 3, "eed", 3))) return;
  if (apply_rules(z, n, fix, 1)) return;
  char c = z[*n - 1];
  int cons = m0 ? !is_vowel(c, 0) : consonant_at(z, *n - 1);
  if (*n >= 2 && cons && c != 'l' && c != 's' && c != 'z' && c == z[*n - 2])
    (*n)--;
  else if (m_eq1(z, *n) && ends_cvc(z, *n))
    z[(*n)++] = 'e';
}

/* Stem z[0..*n) in place (room for *n + 1 bytes). */
static void porter_stem(char *z, int *n, int m0) {
  step1a(z, n, m0);
  step1b(z, n, m0);
  if (z[*n - 1] == 'y' && has_vowel(z, *n - 1)) z[*n - 1] = 'i'; /* step 1c */
  apply_rules(z, n, step2, m0);
  apply_rules(z, n, step3, m0);
  apply_rules(z, n, step4, m0);
  if (z[*n - 1] == 'e' && (m_gt1(z, *n - 1) || (m_eq1(z, *n - 1) && !ends_cvc(z, *n - 1))))
    (*n)--;                                                                       /* step 5a */
  if (*n > 1 && z[*n - 1] == 'l' && z[*n - 2] == 'l' && m_gt1(z, *n - 1)) (*n)--; /* 5b */
}

int ext_tok_porter(const char *tok, int ntok, char *buf, int *nbuf, int fts3) {
  if (ntok < 3 || ntok > PORTER_MAX) return 0;
  memcpy(buf, tok, (size_t)ntok);
  *nbuf = ntok;
  porter_stem(buf, nbuf, !fts3);
  return 1;
}
