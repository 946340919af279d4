/*
 * policy/parent.c: the upstream proxy's URL (a table of accepted and
 * refused spellings), the noProxy list in both forms and the route each
 * target takes, and the Basic credentials (RFC 7617's example, padding,
 * refusals that never quote the secret).
 */
#include <sys/socket.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

struct url_case {
	const char	*in;
	const char	*text;	/* accepted: "host:port"; NULL: refused */
	const char	*err;	/* refused: substring of the message */
};

static const struct url_case url_cases[] = {
	{ "http://proxy.corp:3128", "proxy.corp:3128", NULL },
	{ "http://proxy.corp:3128/", "proxy.corp:3128", NULL },
	{ "HTTP://Proxy.Corp.:8080", "proxy.corp:8080", NULL },
	{ "http://proxy.corp", "proxy.corp:80", NULL },
	{ "http://10.1.2.3:3128", "10.1.2.3:3128", NULL },
	{ "http://10.1:3128", "10.0.0.1:3128", NULL },
	{ "http://[fd00::1]:3128", "[fd00::1]:3128", NULL },
	{ "http://[::ffff:10.0.0.1]:3128", "10.0.0.1:3128", NULL },
	{ "http://localhost:3128", "localhost:3128", NULL },
	{ "https://proxy.corp:3128", NULL, "https:// (TLS to the upstream" },
	{ "socks5://proxy.corp:1080", NULL, "only http:// upstream proxies" },
	{ "proxy.corp:3128", NULL, "expected http://HOST:PORT" },
	{ "", NULL, "expected http://HOST:PORT" },
	{ "http://", NULL, "no host" },
	{ "http:///", NULL, "no host" },
	{ "http://user:secret@proxy.corp:3128", NULL,
	    "credentials in the URL are refused" },
	{ "http://user@proxy.corp:3128", NULL, "credentials in the URL" },
	{ "http://proxy.corp:3128/path", NULL, "no path, query or fragment" },
	{ "http://proxy.corp:3128//", NULL, "no path, query or fragment" },
	{ "http://proxy.corp:3128?x=1", NULL, "no path, query or fragment" },
	{ "http://proxy.corp:3128#f", NULL, "no path, query or fragment" },
	{ "http://proxy.corp:0", NULL, "invalid port" },
	{ "http://proxy.corp:65536", NULL, "invalid port" },
	{ "http://proxy.corp:03128", NULL, "invalid port" },
	{ "http://proxy.corp:", NULL, "missing port" },
	{ "http://*.corp:3128", NULL, "" },
	{ "http://proxy corp:3128", NULL, "" },
	{ "http://[fd00::1:3128", NULL, "unterminated" },
	{ "http://fd00::1:3128", NULL, "" },
	{ "http://b\xc3\xbc" "cher.de:3128", NULL, "punycode" },
};

struct route_case {
	const char	*noproxy;	/* srt string ("" none), or NULL */
	const char	*list[4];	/* pisbx entries, NULL-terminated */
	const char	*target;	/* "host:port" */
	int		 tls;
	const char	*via;		/* "host:port", or NULL: direct */
};

#define HTTP_UP		"http.up:3128"
#define HTTPS_UP	"https.up:3129"

static const struct route_case route_cases[] = {
	/* no list: the upstream, by port; the loopback always direct */
	{ "", { NULL }, "example.com:443", 1, HTTPS_UP },
	{ "", { NULL }, "example.com:443", 0, HTTP_UP },
	{ "", { NULL }, "example.com:80", 0, HTTP_UP },
	{ "", { NULL }, "10.0.0.5:22", 0, HTTP_UP },
	{ "", { NULL }, "127.0.0.1:8080", 0, NULL },
	{ "", { NULL }, "127.9.9.9:443", 1, NULL },
	{ "", { NULL }, "[::1]:8080", 0, NULL },
	{ "", { NULL }, "localhost:8080", 0, NULL },
	{ "", { NULL }, "api.localhost:8080", 0, NULL },
	{ "", { NULL }, "host.pisbx.internal:8080", 0, NULL },
	{ "", { NULL }, "x.host.pisbx.internal:8080", 0, HTTP_UP },
	{ "", { NULL }, "localhost.example.com:80", 0, HTTP_UP },
	{ "", { NULL }, "notlocalhost:80", 0, HTTP_UP },
	/* srt / NO_PROXY: a name is itself and every name below it */
	{ "corp.example,.internal, *.lan ,10.0.0.0/8,::1,fd00::/8,"
	    "git.example.com:8443,", { NULL }, "corp.example:443", 1, NULL },
	{ "corp.example", { NULL }, "a.b.corp.example:443", 1, NULL },
	{ "corp.example", { NULL }, "xcorp.example:443", 1, HTTPS_UP },
	{ ".internal", { NULL }, "internal:80", 0, NULL },
	{ ".internal", { NULL }, "svc.internal:80", 0, NULL },
	{ "*.lan", { NULL }, "lan:80", 0, NULL },
	{ "*.lan", { NULL }, "nas.lan:80", 0, NULL },
	{ "10.0.0.0/8", { NULL }, "10.200.1.1:443", 1, NULL },
	{ "10.0.0.0/8", { NULL }, "11.0.0.1:443", 1, HTTPS_UP },
	{ "10.0.0.0/8", { NULL }, "ten.example:443", 1, HTTPS_UP },
	{ "fd00::/8", { NULL }, "[fd12::1]:443", 1, NULL },
	{ "fd00::/8", { NULL }, "[fe80::1]:443", 1, HTTPS_UP },
	{ "192.168.1.0/25", { NULL }, "192.168.1.127:80", 0, NULL },
	{ "192.168.1.0/25", { NULL }, "192.168.1.128:80", 0, HTTP_UP },
	{ "0.0.0.0/0", { NULL }, "8.8.8.8:53", 0, NULL },
	{ "git.example.com:8443", { NULL }, "git.example.com:8443", 1, NULL },
	{ "git.example.com:8443", { NULL }, "git.example.com:443", 1,
	    HTTPS_UP },
	{ "2001:db8::7", { NULL }, "[2001:db8::7]:443", 1, NULL },
	{ "*", { NULL }, "example.com:443", 1, NULL },
	/* pisbx patterns: exact is exact */
	{ NULL, { "corp.example", NULL }, "corp.example:80", 0, NULL },
	{ NULL, { "corp.example", NULL }, "a.corp.example:80", 0, HTTP_UP },
	{ NULL, { "*.corp.example", NULL }, "a.corp.example:80", 0, NULL },
	{ NULL, { "*.corp.example", NULL }, "corp.example:80", 0, HTTP_UP },
	{ NULL, { "*.internal", NULL }, "x.internal:80", 0, NULL },
	{ NULL, { "gitlab:443", NULL }, "gitlab:443", 1, NULL },
	{ NULL, { "gitlab:443", NULL }, "gitlab:22", 0, HTTP_UP },
	{ NULL, { "[fd00::]/8", "172.16.0.0/12", NULL }, "172.31.0.1:80", 0,
	    NULL },
	{ NULL, { "[fd00::]/8", NULL }, "[fdff::1]:80", 0, NULL },
	{ NULL, { "10.1.2.3", NULL }, "10.1.2.3:80", 0, NULL },
	{ NULL, { "10.1.2.3", NULL }, "0x0a010203:80", 0, NULL },
	{ NULL, { "*", NULL }, "anything.example:80", 0, NULL },
};

struct noproxy_bad {
	const char	*in;
	int		 srt;
	const char	*err;
};

static const struct noproxy_bad noproxy_bad[] = {
	{ "https://x.com", 0, "not a URL" },
	{ "*.com.*", 0, "'*' is only allowed once" },
	{ "a..b", 0, "" },
	{ "10.0.0.0/33", 0, "more prefix bits" },
	{ "fd00::/129", 1, "more prefix bits" },
	{ "10.0.0.0/", 0, "expected ADDRESS/BITS" },
	{ "10.0.0.0/08", 0, "expected ADDRESS/BITS" },
	{ "example.com/8", 0, "expected ADDRESS/BITS" },
	{ "10.0.0.0/8:80", 0, "expected ADDRESS/BITS" },
	{ "", 0, "empty entry" },
	{ " ", 1, "empty entry" },
	{ ".", 1, "empty name" },
	{ "*.", 1, "empty name" },
	{ "*x.com", 1, "'*' is only allowed" },
	{ "a.com:0", 1, "invalid port" },
};

static void
test_url(void **state)
{
	const struct url_case	*c;
	struct parent_url	 u;
	const char		*err;
	size_t			 i;
	int			 rc;

	(void)state;
	for (i = 0; i < sizeof(url_cases) / sizeof(*url_cases); i++) {
		c = &url_cases[i];
		err = NULL;
		rc = parent_url_parse(c->in, strlen(c->in), &u, &err);
		if (c->text != NULL && (rc != 0 || strcmp(u.text, c->text) != 0 ||
		    !u.set))
			fail_msg("%s: want %s, got rc %d %s (%s)", c->in, c->text,
			    rc, rc == 0 ? u.text : "", err ? err : "");
		if (c->text == NULL && (rc != -1 || err == NULL ||
		    strstr(err, c->err) == NULL))
			fail_msg("%s: want refused with \"%s\", got rc %d (%s)",
			    c->in, c->err, rc, err ? err : "");
		/* A refusal never quotes what the URL held. */
		if (rc == -1 && strstr(err, "secret") != NULL)
			fail_msg("%s: the message quotes the password", c->in);
	}
	/* A NUL inside the value. */
	assert_int_equal(parent_url_parse("http://a.b:1\0x", 14, &u, &err), -1);
	assert_non_null(strstr(err, "NUL"));
}

static struct parent_proxy *
route_proxy(const struct route_case *c)
{
	struct parent_proxy	*pp;
	const char		*err = NULL, *s, *e;
	size_t			 i;

	assert_non_null(pp = parent_new());
	assert_int_equal(parent_url_parse("http://http.up:3128", 19,
	    &pp->http, &err), 0);
	assert_int_equal(parent_url_parse("http://https.up:3129", 20,
	    &pp->https, &err), 0);
	if (c->noproxy != NULL) {
		/* As the config loader splits srt's string. */
		for (s = c->noproxy; *s != '\0'; s = *e ? e + 1 : e) {
			e = strchr(s, ',');
			if (e == NULL)
				e = s + strlen(s);
			if (e == s)
				continue;
			if (parent_noproxy_add(pp, s, (size_t)(e - s), 1, &err)
			    != 0)
				fail_msg("noProxy \"%.*s\": %s", (int)(e - s), s,
				    err);
		}
	}
	for (i = 0; c->list[i] != NULL; i++)
		if (parent_noproxy_add(pp, c->list[i], strlen(c->list[i]), 0,
		    &err) != 0)
			fail_msg("noProxy entry %s: %s", c->list[i], err);
	return pp;
}

static void
test_route(void **state)
{
	const struct route_case	*c;
	const struct parent_url	*u;
	struct parent_proxy	*pp;
	struct host		 h;
	const char		*err;
	uint16_t		 port;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(route_cases) / sizeof(*route_cases); i++) {
		c = &route_cases[i];
		pp = route_proxy(c);
		assert_int_equal(target_parse(c->target, strlen(c->target), 0,
		    &h, &port, &err), 0);
		u = parent_route(pp, &h, port, c->tls);
		if ((u == NULL) != (c->via == NULL) || (u != NULL &&
		    strcmp(u->text, c->via) != 0))
			fail_msg("%s (noProxy %s%s): want %s, got %s", c->target,
			    c->noproxy ? c->noproxy : "", c->list[0] ?
			    c->list[0] : "", c->via ? c->via : "direct",
			    u ? u->text : "direct");
		parent_free(pp);
	}
	/* One upstream serves both kinds when the other is not given. */
	assert_non_null(pp = parent_new());
	assert_int_equal(parent_url_parse("http://one:1", 12, &pp->https,
	    &err), 0);
	assert_int_equal(target_parse("a.example:80", 12, 0, &h, &port, &err),
	    0);
	assert_non_null(u = parent_route(pp, &h, port, 0));
	assert_string_equal(u->text, "one:1");
	parent_free(pp);
	/* No proxy at all: direct. */
	assert_null(parent_route(NULL, &h, port, 1));
}

static void
test_noproxy_bad(void **state)
{
	const struct noproxy_bad	*c;
	struct parent_proxy		*pp;
	const char			*err;
	size_t				 i;

	(void)state;
	for (i = 0; i < sizeof(noproxy_bad) / sizeof(*noproxy_bad); i++) {
		c = &noproxy_bad[i];
		assert_non_null(pp = parent_new());
		err = NULL;
		if (parent_noproxy_add(pp, c->in, strlen(c->in), c->srt, &err)
		    != -1 || err == NULL || strstr(err, c->err) == NULL)
			fail_msg("noProxy \"%s\" (srt %d): want refused with "
			    "\"%s\", got %s", c->in, c->srt, c->err,
			    err ? err : "accepted");
		parent_free(pp);
	}
}

static void
test_auth(void **state)
{
	static const struct {
		const char	*cred;
		const char	*header;
	} ok[] = {
		/* RFC 7617, section 2 */
		{ "Aladdin:open sesame", "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==" },
		{ "a:", "Basic YTo=" },
		{ "ab:", "Basic YWI6" },
		{ "ab:c", "Basic YWI6Yw==" },
		{ "u:p:w", "Basic dTpwOnc=" },
		{ "test:\xc2\xa3", "Basic dGVzdDrCow==" },
	};
	static const struct {
		const char	*cred;
		const char	*err;
	} bad[] = {
		{ "", "empty credentials" },
		{ "nocolonsecret", "no ':' found" },
		{ ":secret", "the user is empty" },
		{ "u:sec\r\nX-Evil: 1", "control character" },
		{ "u:secret\n", "control character" },
		{ "u:sec\tret", "control character" },
		{ "u:\x7fsecret", "control character" },
	};
	struct parent_proxy	*pp;
	const char		*err;
	char			 big[PARENT_CRED_MAX + 2];
	size_t			 i;

	(void)state;
	assert_non_null(pp = parent_new());
	for (i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
		assert_int_equal(parent_auth_set(pp, ok[i].cred,
		    strlen(ok[i].cred), &err), 0);
		assert_string_equal(pp->auth, ok[i].header);
		assert_int_equal(pp->authlen, strlen(ok[i].header));
	}
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		err = NULL;
		if (parent_auth_set(pp, bad[i].cred, strlen(bad[i].cred),
		    &err) != -1 || strstr(err, bad[i].err) == NULL)
			fail_msg("credentials %zu: want \"%s\", got %s", i,
			    bad[i].err, err ? err : "accepted");
		assert_null(strstr(err, "secret"));
		assert_null(strstr(err, "sec"));
	}
	/* A refused value keeps the earlier one. */
	assert_string_equal(pp->auth, ok[sizeof(ok) / sizeof(*ok) - 1].header);
	memset(big, 'x', sizeof(big));
	big[1] = ':';
	assert_int_equal(parent_auth_set(pp, big, PARENT_CRED_MAX, &err), 0);
	assert_int_equal(parent_auth_set(pp, big, PARENT_CRED_MAX + 1, &err),
	    -1);
	assert_non_null(strstr(err, "longer than"));
	parent_free(pp);
}

/* What a refusal by (or a failure of) the upstream proxy tells to do. */
static void
test_hint(void **state)
{
	static const char json[] = "{\"network\": {\"parentProxy\": "
	    "{\"http\": \"http://gw:3128\", \"credentialsEnv\": "
	    "\"PISBX_TEST_HINT_CRED\"}}}";
	struct config_errors	 errs = { NULL, 0 };
	struct config		*conf;
	struct host		 h;
	const char		*err;
	uint16_t		 port;
	char			 buf[1400];

	(void)state;
	setenv("PISBX_TEST_HINT_CRED", "u:p", 1);
	conf = config_load_buffer(json, strlen(json), "/etc/pisbx/c.json",
	    &errs);
	unsetenv("PISBX_TEST_HINT_CRED");
	assert_non_null(conf);
	assert_int_equal(target_parse("git.corp:8443", 13, 0, &h, &port,
	    &err), 0);
	assert_int_equal(policy_hint(conf, &h, port, "parent-auth", buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "check the upstream proxy's credentials in "
	    "$PISBX_TEST_HINT_CRED (network.parentProxy.credentialsEnv in "
	    "/etc/pisbx/c.json)");
	assert_int_equal(policy_hint(conf, &h, port, "parent-refused", buf,
	    sizeof(buf)), 0);
	assert_non_null(strstr(buf, "refused it by its own policy"));
	assert_null(strstr(buf, "noProxy"));
	assert_int_equal(policy_hint(conf, &h, port, "parent-error", buf,
	    sizeof(buf)), 0);
	assert_non_null(strstr(buf, "network.parentProxy.noProxy "
	    "(\"git.corp:8443\")"));
	assert_int_equal(policy_hint(conf, &h, port, "parent-method", buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "TRACE and TRACK are not sent to the "
	    "upstream proxy as proxy requests, since its echo would carry its "
	    "credentials; with network.parentProxy.httpForwarding \"tunnel\" "
	    "(the default) in /etc/pisbx/c.json they go inside a tunnel");
	/* The tunnel for plain HTTP refused: the gateway's side, or the key. */
	assert_int_equal(policy_hint_parent_tunnel(conf, 80, buf,
	    sizeof(buf)), 0);
	assert_non_null(strstr(buf, "refused CONNECT to port 80"));
	assert_non_null(strstr(buf, "(squid: \"acl SSL_ports port 80\")"));
	assert_non_null(strstr(buf, "set network.parentProxy.httpForwarding "
	    "to \"absolute-form\" in /etc/pisbx/c.json"));
	/* Without credentials: where they go. */
	free(conf->parent->cred_env);
	conf->parent->cred_env = NULL;
	assert_int_equal(policy_hint(conf, &h, port, "parent-auth", buf,
	    sizeof(buf)), 0);
	assert_non_null(strstr(buf, "set network.parentProxy.credentialsFile "
	    "or credentialsEnv in /etc/pisbx/c.json"));
	config_free(conf);
	/* No upstream configured: no such hint. */
	conf = config_load_buffer("{}", 2, "c.json", &errs);
	assert_non_null(conf);
	assert_int_equal(policy_hint(conf, &h, port, "parent-auth", buf,
	    sizeof(buf)), -1);
	assert_int_equal(policy_hint_parent_tunnel(conf, 80, buf,
	    sizeof(buf)), -1);
	assert_string_equal(buf, "");
	config_free(conf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_route),
		cmocka_unit_test(test_noproxy_bad),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_hint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
