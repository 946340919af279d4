/*
 * Unit tests for common/: sockaddr text both ways (tables of good and bad
 * spellings), RFC 3339 timestamps, shell quoting read back by a real
 * sh(1), the write-everything loop against a full socket, a slow
 * reader and a reader that went away, the safe open of a file to write
 * against links, FIFOs and hard links, a path's real name against
 * realpath(3), text masked for a terminal, and
 * SHA-256 against FIPS 180-4's examples and OpenSSL at every length
 * around the padding's edges.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/evp.h>

#include "common/io.h"
#include "common/sha256.h"
#include "common/shell.h"
#include "common/sockaddr.h"
#include "common/text.h"
#include "common/time.h"

/* Spellings that parse, and their canonical text (NULL: the same). */
static const struct {
	const char	*in;
	int		 family;
	unsigned	 port;
	const char	*out;
} sa_good[] = {
	{ "127.0.0.1:3128",		AF_INET,	3128,	NULL },
	{ "0.0.0.0:0",			AF_INET,	0,	NULL },
	{ "10.1.2.3:65535",		AF_INET,	65535,	NULL },
	{ "255.255.255.255:1",		AF_INET,	1,	NULL },
	{ "192.0.20.100:10009",		AF_INET,	10009,	NULL },
	{ "127.0.0.1:080",		AF_INET,	80,	"127.0.0.1:80" },
	{ "[::1]:0",			AF_INET6,	0,	NULL },
	{ "[2001:db8::1]:443",		AF_INET6,	443,	NULL },
	{ "[2001:DB8:0:0::1]:443",	AF_INET6,	443,	"[2001:db8::1]:443" },
	{ "[::ffff:1.2.3.4]:80",	AF_INET6,	80,	NULL },
};

/* Spellings that do not: names, shorthand, bad ports, bad brackets. */
static const char *const sa_bad[] = {
	"", ":80", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
	"127.0.0.1:99999", "127.0.0.1:000080", "127.0.0.1:+80",
	"127.0.0.1: 80", "127.0.0.1:8a", "127.0.0.1:-1", "localhost:80",
	"1.2.3:80", "0x7f.0.0.1:80", "127.1:80", "::1:80", "[::1]",
	"[::1]80", "[::1]:", "[::1", "::1]:80", "[127.0.0.1]:80",
	"[fe80::1%eth0]:80", "[]:80", "[::1]:80:80", "1.2.3.4 :80",
};

static void
test_sockaddr_parse(void **state)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	char			 text[SOCKADDR_TEXT_MAX];
	unsigned		 port;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(sa_good) / sizeof(sa_good[0]); i++) {
		len = 0;
		if (sockaddr_parse(sa_good[i].in, &ss, &len) != 0)
			fail_msg("refused %s", sa_good[i].in);
		assert_int_equal(ss.ss_family, sa_good[i].family);
		if (ss.ss_family == AF_INET) {
			assert_int_equal(len, sizeof(struct sockaddr_in));
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		} else {
			assert_int_equal(len, sizeof(struct sockaddr_in6));
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		}
		assert_int_equal(port, sa_good[i].port);
		sockaddr_format((struct sockaddr *)&ss, text, sizeof(text));
		assert_string_equal(text, sa_good[i].out != NULL ?
		    sa_good[i].out : sa_good[i].in);
	}
	for (i = 0; i < sizeof(sa_bad) / sizeof(sa_bad[0]); i++)
		if (sockaddr_parse(sa_bad[i], &ss, &len) != -1)
			fail_msg("accepted \"%s\"", sa_bad[i]);
}

static void
test_sockaddr_format(void **state)
{
	struct sockaddr_un	sun;
	struct sockaddr		other;
	char			text[200];

	(void)state;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, "/run/pisbx/proxy.sock");
	sockaddr_format((struct sockaddr *)&sun, text, sizeof(text));
	assert_string_equal(text, "/run/pisbx/proxy.sock");
	sun.sun_path[0] = '\0';		/* unnamed or abstract */
	sockaddr_format((struct sockaddr *)&sun, text, sizeof(text));
	assert_string_equal(text, "unix");
	memset(&other, 0, sizeof(other));
	other.sa_family = AF_PACKET;
	sockaddr_format(&other, text, sizeof(text));
	assert_string_equal(text, "?");
}

static void
test_time_rfc3339(void **state)
{
	char	buf[TIME_RFC3339_MAX];

	(void)state;
	time_rfc3339(buf, sizeof(buf), 0, -1);
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
	time_rfc3339(buf, sizeof(buf), 1796008320, 123);
	assert_string_equal(buf, "2026-11-30T03:12:00.123Z");
	/* The same second again: only the milliseconds differ. */
	time_rfc3339(buf, sizeof(buf), 1796008320, 5);
	assert_string_equal(buf, "2026-11-30T03:12:00.005Z");
	time_rfc3339(buf, sizeof(buf), 951868799, 999);
	assert_string_equal(buf, "2000-02-29T23:59:59.999Z");
	time_rfc3339(buf, sizeof(buf), 1796008320, 0);
	assert_string_equal(buf, "2026-11-30T03:12:00.000Z");
	time_rfc3339(buf, sizeof(buf), 1796008320, -1);
	assert_string_equal(buf, "2026-11-30T03:12:00Z");
	/* Cut short, never past the buffer. */
	time_rfc3339(buf, 5, 1796008320, 123);
	assert_string_equal(buf, "2026");
}

/* What sh(1) makes of "printf %s WORD": the word's bytes. */
static char *
sh_echo(const char *word)
{
	char	*cmd, *out;
	FILE	*f;
	size_t	 n;

	assert_true(asprintf(&cmd, "printf %%s %s", word) > 0);
	assert_non_null(f = popen(cmd, "r"));
	assert_non_null(out = calloc(1, 4096));
	n = fread(out, 1, 4095, f);
	out[n] = '\0';
	assert_int_equal(pclose(f), 0);
	free(cmd);
	return out;
}

static void
test_shell_quote(void **state)
{
	static const char *const words[] = {
		"", "plain", "it's", "''", "a b\tc", "$HOME", "`id`",
		"$(id)", "back\\slash", "\"double\"", "new\nline", "*", "~",
		"semi;colon", "&&", "-n", "'\\''", "end'",
	};
	char	 q[256], *end, *got;
	size_t	 i;

	(void)state;
	end = shell_quote(q, "it's");
	assert_string_equal(q, "'it'\\''s'");
	assert_ptr_equal(end, q + strlen(q));
	shell_quote(q, "");
	assert_string_equal(q, "''");
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		assert_true(SHELL_QUOTE_SIZE(strlen(words[i])) <= sizeof(q));
		end = shell_quote(q, words[i]);
		assert_true((size_t)(end - q) + 1 <=
		    SHELL_QUOTE_SIZE(strlen(words[i])));
		got = sh_echo(q);
		assert_string_equal(got, words[i]);
		free(got);
	}
	/* The worst case fills exactly what SHELL_QUOTE_SIZE promises. */
	end = shell_quote(q, "''''");
	assert_int_equal((size_t)(end - q) + 1, SHELL_QUOTE_SIZE(4));
}

static void
test_io_write_all(void **state)
{
	static char	 big[4 * 1024 * 1024];
	char		 buf[65536];
	int		 sv[2], st, counted[2];
	long long	 total = 0, got;
	ssize_t		 n;
	pid_t		 pid;

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	memset(big, 'x', sizeof(big));

	/* Nobody reads a non-blocking socket: EAGAIN at once, or a stall. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(io_write_all(sv[0], big, sizeof(big), 0), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(io_write_all(sv[0], big, sizeof(big), 50), -1);
	assert_int_equal(errno, ETIMEDOUT);
	close(sv[0]);
	close(sv[1]);

	/* A reader that takes its time: everything arrives. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pipe(counted), 0);
	assert_int_not_equal(pid = fork(), -1);
	if (pid == 0) {
		close(sv[0]);
		close(counted[0]);
		while ((n = read(sv[1], buf, sizeof(buf))) > 0) {
			total += n;
			usleep(200);
		}
		if (write(counted[1], &total, sizeof(total)) !=
		    (ssize_t)sizeof(total))
			_exit(1);
		_exit(0);
	}
	close(sv[1]);
	close(counted[1]);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(io_write_all(sv[0], big, sizeof(big), 10000), 0);
	close(sv[0]);
	assert_int_equal(read(counted[0], &got, sizeof(got)), sizeof(got));
	assert_int_equal(got, (long long)sizeof(big));
	close(counted[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	/* The reader went away: the error, not a hang. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	assert_int_equal(io_write_all(sv[0], "x", 1, 1000), -1);
	assert_int_equal(errno, EPIPE);
	close(sv[0]);
	assert_int_equal(io_write_all(-1, "x", 1, 0), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(io_write_all(-1, "", 0, 0), 0);
}

/*
 * io_open_write on each thing a command could leave at a path: a link
 * (the file's, a directory's), a FIFO (no hang), a second hard link, a
 * directory; an ordinary path opens, its directories made, and O_TRUNC
 * truncates.
 */
static void
test_io_open_write(void **state)
{
	static const struct {
		const char	*path;	/* below the temp directory */
		int		 err;
		const char	*why;
	} bad[] = {
		{ "link", ELOOP, "/link is a symbolic link" },
		{ "dlink/x", ELOOP, "/dlink is a symbolic link" },
		{ "dlink/new/x", ELOOP, "/dlink is a symbolic link" },
		{ "fifo", EINVAL, "/fifo is not a regular file" },
		{ "hard", EMLINK, "/hard has 2 hard links" },
		{ "dir", EINVAL, "/dir is not a regular file" },
		{ "dir/", EISDIR, "names a directory" },
		{ "file/x", ENOTDIR, "/file is not a directory" },
		{ "none/x", ENOENT, "/none: No such file or directory" },
	};
	char		 dir[] = "/tmp/pisbx-io.XXXXXX";
	char		 why[PATH_MAX + 256], p[PATH_MAX], q[PATH_MAX];
	struct stat	 st;
	size_t		 i;
	int		 fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/file", dir);
	assert_int_equal(io_write_all(fd = open(p, O_WRONLY | O_CREAT, 0600),
	    "data", 4, 0), 0);
	close(fd);
	snprintf(q, sizeof(q), "%s/link", dir);
	assert_int_equal(symlink(p, q), 0);
	snprintf(q, sizeof(q), "%s/hard", dir);
	assert_int_equal(link(p, q), 0);
	snprintf(q, sizeof(q), "%s/dlink", dir);
	assert_int_equal(symlink(dir, q), 0);
	snprintf(q, sizeof(q), "%s/fifo", dir);
	assert_int_equal(mkfifo(q, 0600), 0);
	snprintf(q, sizeof(q), "%s/dir", dir);
	assert_int_equal(mkdir(q, 0700), 0);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		snprintf(q, sizeof(q), "%s/%s", dir, bad[i].path);
		fd = io_open_write(q, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC,
		    0600, IO_MKDIRS * (strncmp(bad[i].path, "none", 4) != 0),
		    why, sizeof(why));
		if (fd != -1 || errno != bad[i].err ||
		    strstr(why, bad[i].why) == NULL)
			fail_msg("%s: fd %d errno %d (want %d), \"%s\"",
			    bad[i].path, fd, errno, bad[i].err, why);
	}
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 4);
	snprintf(q, sizeof(q), "%s/new", dir);
	assert_int_equal(stat(q, &st), -1);

	/* Made below real directories; the caller's file truncated. */
	snprintf(q, sizeof(q), "%s/a/b/c.log", dir);
	assert_true((fd = io_open_write(q, O_WRONLY | O_APPEND | O_CREAT,
	    0600, IO_MKDIRS, why, sizeof(why))) >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	snprintf(q, sizeof(q), "%s/hard", dir);
	assert_int_equal(unlink(q), 0);
	assert_true((fd = io_open_write(p, O_WRONLY | O_CREAT | O_TRUNC,
	    0600, 0, why, sizeof(why))) >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 0);
	close(fd);
	snprintf(q, sizeof(q), "rm -rf '%s'", dir);
	assert_int_equal(system(q), 0);
}

/*
 * What a path or a name the sandboxed command chose becomes on a
 * terminal: nothing in it may end our line, start an escape sequence or
 * reorder what is read; well-formed UTF-8 stays (TEXT_ASCII: not even
 * that).
 */
static void
test_text_clean(void **state)
{
	static const struct {
		const char	*in;
		int		 flags;
		size_t		 size;
		const char	*out;
	} t[] = {
		{ "plain /w/a b.txt", 0, 64, "plain /w/a b.txt" },
		{ ".git/hooks/x\n\033[31mpisbx-run: all clear", 0, 64,
		    ".git/hooks/x??[31mpisbx-run: all clear" },
		{ "a\rb\tc\x7f", 0, 64, "a?b?c?" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0, 64,
		    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
		{ "caf\xc3\xa9", TEXT_ASCII, 64, "caf??" },
		/* C1 CSI, as UTF-8 and as a lone byte (8-bit terminals). */
		{ "x\xc2\x9b" "31my", 0, 64, "x??31my" },
		{ "x\x9b" "31my", 0, 64, "x?31my" },
		/* Overlong, surrogate, past U+10FFFF, cut short. */
		{ "\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82", 0, 64,
		    "???????????" },
		/* Bidi override and isolate, line separator. */
		{ "a\xe2\x80\xae" "b\xe2\x81\xa6" "c\xe2\x80\xa8", 0, 64,
		    "a???b???c???" },
		/* Truncated, never in the middle of a character. */
		{ "ab\xe2\x82\xac", 0, 4, "ab" },
		{ "ab\xe2\x82\xac", 0, 6, "ab\xe2\x82\xac" },
		{ "abcdef", 0, 4, "abc" },
		{ "", 0, 4, "" },
	};
	char	 buf[64];
	size_t	 i, n;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(buf, 'Z', sizeof(buf));
		n = text_clean(buf, t[i].size, t[i].in, t[i].flags);
		if (strcmp(buf, t[i].out) != 0)
			fail_msg("row %zu: got \"%s\", want \"%s\"", i, buf,
			    t[i].out);
		assert_int_equal(n, strlen(t[i].out));
	}
	assert_int_equal(text_clean(buf, 0, "x", 0), 0);
}

static void
hex(const uint8_t *md, char *out)
{
	size_t	i;

	for (i = 0; i < SHA256_LEN; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
}

/*
 * io_realpath names what realpath(3) names: a file through a symbolic
 * link to a directory, a relative link, "..", the root; it fails where
 * realpath(3) fails (a missing name, a dangling link, a file used as a
 * directory) with the same errno.
 */
static void
test_io_realpath(void **state)
{
	char		 dir[] = "/tmp/pisbx-rp.XXXXXX";
	char		 p[PATH_MAX], want[PATH_MAX], got[PATH_MAX];
	const char	*good[] = { "/l/f", "/r/f", "/d/../d/f", "/d", "/l",
			    "/d/." };
	const char	*bad[] = { "/none", "/dangling", "/d/f/x", "/l/none" };
	size_t		 i;
	int		 fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/d", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/d/f", dir);
	assert_true((fd = open(p, O_WRONLY | O_CREAT, 0600)) >= 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/l", dir);
	snprintf(want, sizeof(want), "%s/d", dir);
	assert_int_equal(symlink(want, p), 0);
	snprintf(p, sizeof(p), "%s/r", dir);
	assert_int_equal(symlink("d", p), 0);
	snprintf(p, sizeof(p), "%s/dangling", dir);
	assert_int_equal(symlink("nowhere", p), 0);

	for (i = 0; i < sizeof(good) / sizeof(*good); i++) {
		snprintf(p, sizeof(p), "%s%s", dir, good[i]);
		assert_non_null(realpath(p, want));
		assert_non_null(io_realpath(p, got));
		assert_string_equal(got, want);
	}
	assert_non_null(io_realpath("/", got));
	assert_string_equal(got, "/");
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		int	e;

		snprintf(p, sizeof(p), "%s%s", dir, bad[i]);
		errno = 0;
		assert_null(realpath(p, want));
		e = errno;
		errno = 0;
		assert_null(io_realpath(p, got));
		assert_int_equal(errno, e);
	}

	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
}

static void
test_sha256(void **state)
{
	static const struct {
		const char	*in;
		const char	*out;
	} t[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb924"
		    "27ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223"
		    "b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		    "248d6a61d20638b8e5c026930c3e6039"
		    "a33ce45964ff2167f6ecedd419db06c1" },
	};
	uint8_t		 md[SHA256_LEN], want[EVP_MAX_MD_SIZE];
	unsigned int	 wlen;
	char		 got[2 * SHA256_LEN + 1], exp[2 * SHA256_LEN + 1];
	char		*a;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		sha256(t[i].in, strlen(t[i].in), md);
		hex(md, got);
		assert_string_equal(got, t[i].out);
	}
	assert_non_null(a = malloc(1000000));
	memset(a, 'a', 1000000);
	sha256(a, 1000000, md);
	hex(md, got);
	assert_string_equal(got, "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0");
	/* Every length through three blocks: the padding's two cases. */
	for (i = 0; i < 200; i++)
		a[i] = (char)(i * 7 + 1);
	for (i = 0; i <= 200; i++) {
		sha256(a, i, md);
		assert_int_equal(EVP_Digest(a, i, want, &wlen, EVP_sha256(),
		    NULL), 1);
		hex(md, got);
		hex(want, exp);
		if (strcmp(got, exp) != 0)
			fail_msg("length %zu: %s, OpenSSL %s", i, got, exp);
	}
	free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sockaddr_parse),
		cmocka_unit_test(test_sockaddr_format),
		cmocka_unit_test(test_time_rfc3339),
		cmocka_unit_test(test_text_clean),
		cmocka_unit_test(test_shell_quote),
		cmocka_unit_test(test_io_write_all),
		cmocka_unit_test(test_io_open_write),
		cmocka_unit_test(test_io_realpath),
		cmocka_unit_test(test_sha256),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
