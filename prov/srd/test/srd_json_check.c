/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_json_check.c: a strict JSON Lines reader for the tests of
 * srd_stat --json (fabtests/scripts/srd_stat_check.sh), so that they need
 * no python or jq.  Each line of the input must hold exactly one JSON
 * value (RFC 8259: no trailing commas, no control characters in strings,
 * no leading zeros, no duplicate keys in an object).  Prints each leaf as
 * PATH=VALUE, the path starting with the line's number (from 0):
 *   0.ep.tx_pkts=10   0.peers[0].paths[3].state=UP
 * (strings without their quotes, escapes as written).  With -q prints
 * nothing.  Exit 0 when the whole input is valid, else 1 with the line
 * and column of the first error on stderr.
 * It checks syntax only; what the values mean is the script's business.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_DEPTH_MAX	32
#define JSON_PATH_MAX	1024

struct json_rd {
	const char *s;		/* the whole input */
	size_t pos, len;
	int quiet;
	char path[JSON_PATH_MAX];
};

static void json_fail(struct json_rd *r, const char *what)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < r->pos && i < r->len; i++) {
		col++;
		if (r->s[i] == '\n') {
			line++;
			col = 1;
		}
	}
	fprintf(stderr, "srd_json_check: line %zu column %zu: %s\n", line, col,
		what);
	exit(1);
}

static int json_peek(const struct json_rd *r)
{
	return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

/* Spaces inside a value; a newline ends the line's value, so only the
 * caller between lines skips it. */
static void json_space(struct json_rd *r)
{
	while (json_peek(r) == ' ' || json_peek(r) == '\t' ||
	       json_peek(r) == '\r')
		r->pos++;
}

static void json_expect(struct json_rd *r, char c, const char *what)
{
	json_space(r);
	if (json_peek(r) != c)
		json_fail(r, what);
	r->pos++;
}

/* A string; returns its raw contents (between the quotes) in a new
 * buffer. */
static char *json_string(struct json_rd *r)
{
	size_t start;
	char *out;

	json_expect(r, '"', "expected a string");
	start = r->pos;
	for (;;) {
		int c = json_peek(r);

		if (c < 0 || c == '\n')
			json_fail(r, "unterminated string");
		if (c < 0x20)
			json_fail(r, "control character in a string");
		r->pos++;
		if (c == '"')
			break;
		if (c != '\\')
			continue;
		c = json_peek(r);
		if (c < 0 || !strchr("\"\\/bfnrtu", c))
			json_fail(r, "bad escape in a string");
		r->pos++;
		for (int i = 0; c == 'u' && i < 4; i++, r->pos++)
			if (!isxdigit(json_peek(r)))
				json_fail(r, "bad \\u escape");
	}
	out = strndup(r->s + start, r->pos - 1 - start);
	if (!out)
		json_fail(r, "out of memory");
	return out;
}

static void json_digits(struct json_rd *r)
{
	if (!isdigit(json_peek(r)))
		json_fail(r, "expected a digit");
	while (isdigit(json_peek(r)))
		r->pos++;
}

static void json_number(struct json_rd *r)
{
	if (json_peek(r) == '-')
		r->pos++;
	if (json_peek(r) == '0')
		r->pos++;	/* no leading zeros: a fraction may follow */
	else
		json_digits(r);
	if (json_peek(r) == '.') {
		r->pos++;
		json_digits(r);
	}
	if (json_peek(r) == 'e' || json_peek(r) == 'E') {
		r->pos++;
		if (json_peek(r) == '+' || json_peek(r) == '-')
			r->pos++;
		json_digits(r);
	}
}

static void json_leaf(struct json_rd *r, size_t start, size_t end)
{
	size_t len = end - start;

	if (r->quiet)
		return;
	/* a string prints without its quotes */
	if (len >= 2 && r->s[start] == '"') {
		start++;
		len -= 2;
	}
	printf("%s=%.*s\n", r->path, (int)len, r->s + start);
}

static void json_value(struct json_rd *r, int depth);

/* Appends ".key" or "[i]" to the path for one member; the caller takes
 * it off again after (returns the old length). */
static size_t json_path_key(struct json_rd *r, const char *key)
{
	size_t old = strlen(r->path);

	snprintf(r->path + old, sizeof(r->path) - old, ".%s", key);
	return old;
}

static size_t json_path_index(struct json_rd *r, size_t i)
{
	size_t old = strlen(r->path);

	snprintf(r->path + old, sizeof(r->path) - old, "[%zu]", i);
	return old;
}

static void json_object(struct json_rd *r, int depth)
{
	char *keys[256];
	size_t n = 0;

	r->pos++;
	json_space(r);
	if (json_peek(r) == '}') {
		r->pos++;
		return;
	}
	for (;;) {
		char *key = json_string(r);
		size_t old;

		for (size_t i = 0; i < n; i++)
			if (!strcmp(keys[i], key))
				json_fail(r, "duplicate key");
		if (n == sizeof(keys) / sizeof(keys[0]))
			json_fail(r, "too many keys");
		keys[n++] = key;
		json_expect(r, ':', "expected ':'");
		old = json_path_key(r, key);
		json_value(r, depth + 1);
		r->path[old] = '\0';
		json_space(r);
		if (json_peek(r) == '}')
			break;
		json_expect(r, ',', "expected ',' or '}'");
	}
	r->pos++;
	while (n)
		free(keys[--n]);
}

static void json_array(struct json_rd *r, int depth)
{
	size_t i = 0;

	r->pos++;
	json_space(r);
	if (json_peek(r) == ']') {
		r->pos++;
		return;
	}
	for (;; i++) {
		size_t old = json_path_index(r, i);

		json_value(r, depth + 1);
		r->path[old] = '\0';
		json_space(r);
		if (json_peek(r) == ']')
			break;
		json_expect(r, ',', "expected ',' or ']'");
	}
	r->pos++;
}

static void json_value(struct json_rd *r, int depth)
{
	size_t start;
	int c;

	if (depth > JSON_DEPTH_MAX)
		json_fail(r, "nested too deep");
	json_space(r);
	start = r->pos;
	c = json_peek(r);
	if (c == '{')
		json_object(r, depth);
	else if (c == '[')
		json_array(r, depth);
	else if (c == '"')
		free(json_string(r));
	else if (c == '-' || isdigit(c))
		json_number(r);
	else if (!strncmp(r->s + r->pos, "true", 4) ||
		 !strncmp(r->s + r->pos, "null", 4))
		r->pos += 4;
	else if (!strncmp(r->s + r->pos, "false", 5))
		r->pos += 5;
	else
		json_fail(r, "expected a value");
	if (c != '{' && c != '[')
		json_leaf(r, start, r->pos);
}

static char *json_slurp(FILE *f, size_t *len)
{
	size_t cap = 65536;
	char *buf = malloc(cap);

	*len = 0;
	while (buf) {
		*len += fread(buf + *len, 1, cap - *len, f);
		if (*len < cap)
			return buf;
		cap *= 2;
		buf = realloc(buf, cap);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct json_rd r = { 0 };
	FILE *f = stdin;
	size_t line = 0;
	int arg = 1;

	if (arg < argc && !strcmp(argv[arg], "-q")) {
		r.quiet = 1;
		arg++;
	}
	if (arg < argc && !(f = fopen(argv[arg], "r"))) {
		perror(argv[arg]);
		return 1;
	}
	r.s = json_slurp(f, &r.len);
	if (!r.s || memchr(r.s, '\0', r.len)) {
		fprintf(stderr, "srd_json_check: cannot read the input\n");
		return 1;
	}
	while (r.pos < r.len) {
		snprintf(r.path, sizeof(r.path), "%zu", line++);
		json_value(&r, 0);
		json_space(&r);
		if (json_peek(&r) != '\n')
			json_fail(&r, "expected the end of the line");
		r.pos++;
	}
	free((char *)r.s);
	if (f != stdin)
		fclose(f);
	if (!line) {
		fprintf(stderr, "srd_json_check: no JSON value\n");
		return 1;
	}
	return 0;
}
