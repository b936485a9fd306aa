/*
 * auth.c -- Bearer JWTs as sqld checks them: a compact JWS
 * "header.payload.signature" (base64url), header alg "EdDSA", signed with
 * Ed25519 by one of the keys of --auth-jwt-key-file (verified by OpenSSL),
 * payload claims: "exp" (seconds since the epoch; past = refused), "nbf"
 * (future = refused) and "a" (access level: "ro" read-only, "rw" or absent
 * read-write).
 *
 * The key file holds PEM public keys ("-----BEGIN PUBLIC KEY-----") and/or
 * lines with a raw 32-byte Ed25519 public key in base64url (sqld's format);
 * blank lines and lines starting with # are skipped.
 *
 * Invariants:
 *  1. With no key file, every request is allowed read-write (or read-only
 *     under --readonly); with one, a request needs a token valid now.
 *  2. Only EdDSA tokens are accepted: "none" and HMAC algorithms are refused.
 */
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"

#define MAX_KEYS 16
static EVP_PKEY *keys[MAX_KEYS];
static int n_keys;
static int enabled;

int auth_enabled(void) { return enabled; }

static int add_raw_key(const char *line) {
  unsigned char *raw = NULL;
  long n = b64_decode(line, strlen(line), &raw);
  if (n != 32) {
    free(raw);
    return -1;
  }
  EVP_PKEY *k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, 32);
  free(raw);
  if (!k || n_keys == MAX_KEYS) {
    EVP_PKEY_free(k);
    return -1;
  }
  keys[n_keys++] = k;
  return 0;
}

int auth_load(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "shale-server: cannot read %s\n", path);
    return -1;
  }
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = 0;
    char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (!*p || *p == '#') continue;
    if (!strncmp(p, "-----BEGIN", 10)) {
      /* gather the PEM block and let OpenSSL read it */
      char pem[16384];
      size_t k = (size_t)snprintf(pem, sizeof pem, "%s\n", p);
      while (fgets(line, sizeof line, f) && k < sizeof pem - 1) {
        k += (size_t)snprintf(pem + k, sizeof pem - k, "%s", line);
        if (!strncmp(line, "-----END", 8)) break;
      }
      BIO *bio = BIO_new_mem_buf(pem, (int)k);
      EVP_PKEY *key = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
      BIO_free(bio);
      if (!key || EVP_PKEY_id(key) != EVP_PKEY_ED25519 || n_keys == MAX_KEYS) {
        fprintf(stderr, "shale-server: %s: a PEM block is not an Ed25519 public key\n", path);
        EVP_PKEY_free(key);
        fclose(f);
        return -1;
      }
      keys[n_keys++] = key;
    } else if (add_raw_key(p)) {
      fprintf(stderr, "shale-server: %s: \"%.40s\" is not a base64url Ed25519 public key\n", path,
              p);
      fclose(f);
      return -1;
    }
  }
  fclose(f);
  if (!n_keys) {
    fprintf(stderr, "shale-server: %s holds no key\n", path);
    return -1;
  }
  enabled = 1;
  return 0;
}

void auth_free(void) {
  while (n_keys > 0) EVP_PKEY_free(keys[--n_keys]);
}

static json_t *decode_part(const char *p, size_t n) {
  unsigned char *raw = NULL;
  long len = b64_decode(p, n, &raw);
  if (len < 0) return NULL;
  json_t *j = json_loadb((const char *)raw, (size_t)len, 0, NULL);
  free(raw);
  return j;
}

int auth_check(const char *jwt, int *readonly, const char **why) {
  *readonly = g_cfg.readonly;
  if (!enabled) return 0;
  if (!jwt || !*jwt) {
    *why = "authentication required: no token given";
    return -1;
  }
  const char *d1 = strchr(jwt, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
  if (!d2 || strchr(d2 + 1, '.')) {
    *why = "the token is not a JWT";
    return -1;
  }
  json_t *hdr = decode_part(jwt, (size_t)(d1 - jwt));
  const char *alg = json_string_value(json_object_get(hdr, "alg"));
  if (!alg || strcmp(alg, "EdDSA")) {
    json_decref(hdr);
    *why = "the token is not signed with EdDSA";
    return -1;
  }
  json_decref(hdr);
  unsigned char *sig = NULL;
  long nsig = b64_decode(d2 + 1, strlen(d2 + 1), &sig);
  int good = 0;
  for (int i = 0; nsig == 64 && i < n_keys && !good; i++) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    good = ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, keys[i]) == 1 &&
           EVP_DigestVerify(ctx, sig, 64, (const unsigned char *)jwt, (size_t)(d2 - jwt)) == 1;
    EVP_MD_CTX_free(ctx);
  }
  free(sig);
  if (!good) {
    *why = "the token's signature does not verify";
    return -1;
  }
  json_t *claims = decode_part(d1 + 1, (size_t)(d2 - d1 - 1));
  if (!json_is_object(claims)) {
    json_decref(claims);
    *why = "the token's claims are not a JSON object";
    return -1;
  }
  double now = (double)time(NULL);
  json_t *exp = json_object_get(claims, "exp"), *nbf = json_object_get(claims, "nbf");
  const char *access = json_string_value(json_object_get(claims, "a"));
  int rc = 0;
  if (exp && (!json_is_number(exp) || json_number_value(exp) <= now)) {
    *why = "the token has expired";
    rc = -1;
  } else if (nbf && (!json_is_number(nbf) || json_number_value(nbf) > now)) {
    *why = "the token is not valid yet";
    rc = -1;
  } else if (access && !strcmp(access, "ro")) {
    *readonly = 1;
  } else if (access && strcmp(access, "rw")) {
    *why = "the token's access level is unknown";
    rc = -1;
  }
  json_decref(claims);
  return rc;
}

/* base64url without padding, malloc'ed. */
static char *b64url(const unsigned char *in, size_t n) {
  char *s = b64_encode(in, n);
  if (!s) return NULL;
  size_t k = 0;
  for (size_t i = 0; s[i] && s[i] != '='; i++)
    s[k++] = s[i] == '+' ? '-' : s[i] == '/' ? '_' : s[i];
  s[k] = 0;
  return s;
}

int auth_make_token(const char *key_path, long ttl, int readonly) {
  FILE *f = fopen(key_path, "r");
  EVP_PKEY *key = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
  if (f) fclose(f);
  if (!key || EVP_PKEY_id(key) != EVP_PKEY_ED25519) {
    fprintf(stderr, "shale-server token: %s is not an Ed25519 private key (PEM)\n", key_path);
    EVP_PKEY_free(key);
    return 1;
  }
  char claims[128];
  if (ttl > 0)
    snprintf(claims, sizeof claims, "{\"exp\":%lld%s}", (long long)time(NULL) + ttl,
             readonly ? ",\"a\":\"ro\"" : "");
  else
    snprintf(claims, sizeof claims, "{%s}", readonly ? "\"a\":\"ro\"" : "");
  static const char head[] = "{\"alg\":\"EdDSA\",\"typ\":\"JWT\"}";
  char *h = b64url((const unsigned char *)head, strlen(head));
  char *c = b64url((const unsigned char *)claims, strlen(claims));
  char msg[512];
  snprintf(msg, sizeof msg, "%s.%s", h, c);
  unsigned char sig[64];
  size_t nsig = sizeof sig;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  int good = ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) == 1 &&
             EVP_DigestSign(ctx, sig, &nsig, (const unsigned char *)msg, strlen(msg)) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  char *sg = good ? b64url(sig, nsig) : NULL;
  if (sg) printf("%s.%s\n", msg, sg);
  free(h);
  free(c);
  free(sg);
  return sg ? 0 : 1;
}
