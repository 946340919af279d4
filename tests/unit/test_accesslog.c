/*
 * accesslog_format: the JSON record carries exactly the contract's fields
 * (close records add bytes_up, bytes_down, ms, end), escapes what a peer
 * sent, and the text format gives one readable line.  accesslog_write
 * appends one line per record to a file.
 */
#include <sys/types.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "proxy/accesslog.h"

static json_t *
parse_line(const char *line)
{
	json_error_t err;
	json_t *o;
	size_t len = strlen(line);

	assert_true(len > 1);
	assert_int_equal(line[len - 1], '\n');
	assert_null(memchr(line, '\n', len - 1));
	o = json_loadb(line, len - 1, 0, &err);
	if (o == NULL)
		fail_msg("not JSON: %s (%s)", line, err.text);
	return o;
}

static void
test_decision(void **state)
{
	struct alog_rec r;
	json_t *o;
	char *line;
	const char *ts;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.conn = 7;
	r.proto = "connect";
	r.client = "127.0.0.1:4000";
	r.host = "github.com";
	r.port = 443;
	r.decision = "allow";
	r.reason = "allow-list:*.github.com";
	r.addr = "140.82.121.4:443";
	line = accesslog_format(&r, LOG_FORMAT_JSON);
	assert_non_null(line);
	o = parse_line(line);
	ts = json_string_value(json_object_get(o, "ts"));
	assert_non_null(ts);
	/* 2026-11-30T03:12:00.123Z */
	assert_int_equal(strlen(ts), 24);
	assert_int_equal(ts[10], 'T');
	assert_int_equal(ts[19], '.');
	assert_int_equal(ts[23], 'Z');
	assert_string_equal(json_string_value(json_object_get(o, "event")),
	    "decision");
	assert_int_equal(json_integer_value(json_object_get(o, "conn")), 7);
	assert_string_equal(json_string_value(json_object_get(o, "proto")),
	    "connect");
	assert_string_equal(json_string_value(json_object_get(o, "host")),
	    "github.com");
	assert_int_equal(json_integer_value(json_object_get(o, "port")), 443);
	assert_string_equal(json_string_value(json_object_get(o,
	    "decision")), "allow");
	assert_string_equal(json_string_value(json_object_get(o, "reason")),
	    "allow-list:*.github.com");
	assert_string_equal(json_string_value(json_object_get(o, "addr")),
	    "140.82.121.4:443");
	assert_null(json_object_get(o, "parent"));
	assert_null(json_object_get(o, "bytes_up"));
	assert_null(json_object_get(o, "error"));
	json_decref(o);
	free(line);
}

/* A request record: its fields, the injected names as a JSON array. */
static void
test_request(void **state)
{
	static const char *const names[] = { "$GH_TOKEN", "/home/u/.npm\"rc" };
	struct alog_rec r;
	json_t *o, *a;
	char *line;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.request = 1;
	r.conn = 9;
	r.proto = "connect";
	r.client = "127.0.0.1:4000";
	r.host = "github.com";
	r.port = 443;
	r.method = "POST";
	r.path = "/o/r.git/git-receive-pack?x";
	r.status = 403;
	r.reason = "request-rule";
	r.rule = "POST /*/*/git-receive-pack";
	r.source = "/etc/r.json: $.requestRules[0].deny[0]";
	r.tls = "terminated";
	r.injected = names;
	r.ninjected = 2;
	line = accesslog_format(&r, LOG_FORMAT_JSON);
	assert_non_null(line);
	o = parse_line(line);
	assert_string_equal(json_string_value(json_object_get(o, "event")),
	    "request");
	assert_string_equal(json_string_value(json_object_get(o, "method")),
	    "POST");
	assert_string_equal(json_string_value(json_object_get(o, "path")),
	    "/o/r.git/git-receive-pack?x");
	assert_int_equal(json_integer_value(json_object_get(o, "status")),
	    403);
	assert_string_equal(json_string_value(json_object_get(o, "reason")),
	    "request-rule");
	assert_string_equal(json_string_value(json_object_get(o, "rule")),
	    "POST /*/*/git-receive-pack");
	assert_string_equal(json_string_value(json_object_get(o, "source")),
	    "/etc/r.json: $.requestRules[0].deny[0]");
	assert_string_equal(json_string_value(json_object_get(o, "tls")),
	    "terminated");
	a = json_object_get(o, "injected");
	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(json_string_value(json_array_get(a, 0)),
	    "$GH_TOKEN");
	assert_string_equal(json_string_value(json_array_get(a, 1)),
	    "/home/u/.npm\"rc");
	assert_null(json_object_get(o, "decision"));
	assert_null(json_object_get(o, "bytes_up"));
	json_decref(o);
	free(line);

	line = accesslog_format(&r, LOG_FORMAT_TEXT);
	assert_non_null(line);
	assert_non_null(strstr(line, " conn=9 request connect 127.0.0.1:4000 "
	    "-> github.com:443 POST /o/r.git/git-receive-pack?x 403 "
	    "request-rule rule=\"POST /*/*/git-receive-pack\" "
	    "(/etc/r.json: $.requestRules[0].deny[0]) "
	    "injected=$GH_TOKEN,/home/u/.npm\"rc tls=terminated\n"));
	free(line);
}

static void
test_close_and_escaping(void **state)
{
	struct alog_rec r;
	json_t *o;
	char *line;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.close = 1;
	r.conn = 8;
	r.proto = "socks5";
	r.client = "us\"er\n\xff\\";
	r.host = "a.example";
	r.port = 80;
	r.decision = "deny";
	r.reason = "dns-error";
	r.error = "a.example: Domain name not found";
	r.end = "dns-error";
	r.bytes_up = 12;
	r.bytes_down = 3456789012ULL;
	r.ms = 42;
	line = accesslog_format(&r, LOG_FORMAT_JSON);
	assert_non_null(line);
	o = parse_line(line);
	assert_string_equal(json_string_value(json_object_get(o, "event")),
	    "close");
	assert_string_equal(json_string_value(json_object_get(o, "client")),
	    "us\"er??\\");
	assert_int_equal(json_integer_value(json_object_get(o, "bytes_up")),
	    12);
	assert_true(json_integer_value(json_object_get(o, "bytes_down")) ==
	    3456789012LL);
	assert_int_equal(json_integer_value(json_object_get(o, "ms")), 42);
	assert_string_equal(json_string_value(json_object_get(o, "end")),
	    "dns-error");
	assert_string_equal(json_string_value(json_object_get(o, "error")),
	    "a.example: Domain name not found");
	assert_null(json_object_get(o, "addr"));
	json_decref(o);
	free(line);

	/* No target known yet: no host, port, decision. */
	memset(&r, 0, sizeof(r));
	r.close = 1;
	r.proto = "none";
	r.client = "127.0.0.1:1";
	r.end = "unknown-protocol";
	line = accesslog_format(&r, LOG_FORMAT_JSON);
	o = parse_line(line);
	assert_null(json_object_get(o, "host"));
	assert_null(json_object_get(o, "port"));
	assert_null(json_object_get(o, "decision"));
	json_decref(o);
	free(line);
}

/* json_object_set_new of cleaned text, as the jansson formatter did. */
static void
ref_set(json_t *o, const char *key, const char *val)
{
	char clean[1024];
	size_t i;

	for (i = 0; val[i] != '\0' && i + 1 < sizeof(clean); i++)
		clean[i] = (val[i] >= 0x20 && val[i] < 0x7f) ? val[i] : '?';
	clean[i] = '\0';
	json_object_set_new(o, key, json_string(clean));
}

/* The record as the jansson-based formatter wrote it, for comparison. */
static char *
ref_format(const struct alog_rec *r, const char *ts)
{
	json_t *o = json_object();
	char *js, *line;
	size_t len;

	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "event", json_string(r->close ? "close" :
	    "decision"));
	json_object_set_new(o, "conn", json_integer((json_int_t)r->conn));
	json_object_set_new(o, "proto", json_string(r->proto));
	ref_set(o, "client", r->client ? r->client : "");
	if (r->host != NULL) {
		ref_set(o, "host", r->host);
		json_object_set_new(o, "port", json_integer(r->port));
	}
	if (r->decision != NULL) {
		json_object_set_new(o, "decision", json_string(r->decision));
		ref_set(o, "reason", r->reason ? r->reason : "");
	}
	if (r->addr != NULL && r->addr[0] != '\0')
		ref_set(o, "addr", r->addr);
	if (r->parent != NULL)
		ref_set(o, "parent", r->parent);
	if (r->close) {
		json_object_set_new(o, "bytes_up",
		    json_integer((json_int_t)r->bytes_up));
		json_object_set_new(o, "bytes_down",
		    json_integer((json_int_t)r->bytes_down));
		json_object_set_new(o, "ms", json_integer((json_int_t)r->ms));
		if (r->end != NULL)
			ref_set(o, "end", r->end);
	}
	if (r->error != NULL)
		ref_set(o, "error", r->error);
	js = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	assert_non_null(js);
	len = strlen(js);
	line = malloc(len + 2);
	assert_non_null(line);
	memcpy(line, js, len);
	memcpy(line + len, "\n", 2);
	free(js);
	return line;
}

/* The JSON formatter writes byte for byte what jansson wrote. */
static void
test_same_as_jansson(void **state)
{
	static char longtext[3000];
	struct alog_rec r;
	char *line, *ref, ts[32];
	size_t i;

	(void)state;
	memset(longtext, 'x', sizeof(longtext) - 1);
	longtext[100] = '"';
	longtext[2000] = '\\';
	for (i = 0; i < 8; i++) {
		memset(&r, 0, sizeof(r));
		r.close = i % 2;
		r.conn = i == 7 ? UINT64_MAX : i * 1000003;
		r.proto = i == 6 ? "a\"b\\c\n\t\x01\x1f/" : "connect";
		r.client = i == 3 ? longtext : "127.0.0.1:4242";
		if (i != 2) {
			r.host = i == 4 ? "we\"ird\\\x7f\xc3\xa9" :
			    "example.com";
			r.port = i == 5 ? 65535 : 443;
		}
		if (i != 1) {
			r.decision = i % 3 ? "allow" : "deny";
			r.reason = i == 5 ? NULL : "allow-list:*.example.com";
		}
		r.addr = i == 0 ? "" : i == 4 ? NULL : "[::1]:443";
		r.parent = i % 2 ? "proxy.corp:3128" : NULL;
		r.error = i % 3 == 2 ? "connect to 1.2.3.4:5: \"refused\"\r" :
		    NULL;
		r.end = i == 5 ? NULL : "eof";
		r.bytes_up = i == 7 ? UINT64_MAX : i * 77;
		r.bytes_down = (uint64_t)i << 40;
		r.ms = i * 12345;
		line = accesslog_format(&r, LOG_FORMAT_JSON);
		assert_non_null(line);
		assert_true(strncmp(line, "{\"ts\":\"", 7) == 0);
		memcpy(ts, line + 7, 24);
		ts[24] = '\0';
		ref = ref_format(&r, ts);
		assert_string_equal(line, ref);
		free(line);
		free(ref);
	}
}

static void
test_text(void **state)
{
	struct alog_rec r;
	char *line;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.conn = 3;
	r.proto = "http";
	r.client = "127.0.0.1:5";
	r.host = "denied.test";
	r.port = 80;
	r.decision = "deny";
	r.reason = "deny-list:denied.test";
	line = accesslog_format(&r, LOG_FORMAT_TEXT);
	assert_non_null(line);
	assert_non_null(strstr(line, "Z conn=3 decision http 127.0.0.1:5 -> "
	    "denied.test:80 deny deny-list:denied.test\n"));
	assert_null(memchr(line, '\n', strlen(line) - 1));
	free(line);
	/* Through the upstream proxy. */
	r.decision = "allow";
	r.reason = "allow-list:example.com";
	r.addr = "10.0.0.8:3128";
	r.parent = "gw.corp:3128";
	line = accesslog_format(&r, LOG_FORMAT_TEXT);
	assert_non_null(line);
	assert_non_null(strstr(line, " allow allow-list:example.com via "
	    "10.0.0.8:3128 parent=gw.corp:3128\n"));
	free(line);
}

static void
test_write_file(void **state)
{
	char path[] = "/tmp/pisbx-alog-XXXXXX", buf[4096];
	struct accesslog *al;
	struct alog_rec r;
	FILE *f;
	int fd, n = 0;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd != -1);
	close(fd);
	al = accesslog_open(path, LOG_FORMAT_JSON);
	assert_non_null(al);
	memset(&r, 0, sizeof(r));
	r.proto = "http";
	r.client = "c";
	accesslog_write(al, &r);
	r.close = 1;
	accesslog_write(al, &r);
	assert_int_equal(accesslog_reopen(al), 0);
	accesslog_write(al, &r);
	accesslog_free(al);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(buf, sizeof(buf), f) != NULL) {
		json_decref(parse_line(buf));
		n++;
	}
	fclose(f);
	unlink(path);
	assert_int_equal(n, 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decision),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_close_and_escaping),
		cmocka_unit_test(test_same_as_jansson),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_write_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
