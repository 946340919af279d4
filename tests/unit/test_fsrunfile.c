/*
 * fsrunfile.c: the run directory's files, made in memory and written out
 * as the sandbox writes them -- each file's contents and mode exactly
 * (the umask taking nothing), unique names numbered, and no file written
 * over one that is there or through a link.
 */
#include <sys/stat.h>
#include <sys/uio.h>

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "launcher/fs/fs.h"

static char	top[128];

static int	 setup(void **);
static int	 teardown(void **);
static void	 check_file(int dfd, const char *name, const char *want,
		    size_t len, mode_t mode);

static void
check_file(int dfd, const char *name, const char *want, size_t len,
    mode_t mode)
{
	struct stat	 st;
	char		 buf[8192];
	ssize_t		 n;
	int		 fd;

	assert_int_equal(fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, mode);
	assert_int_not_equal(fd = openat(dfd, name, O_RDONLY), -1);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_int_equal(n, (ssize_t)len);
	assert_memory_equal(buf, want, len);
}

/* Every kind of file, written out as they were made. */
static void
test_write(void **state)
{
	struct fs_runfiles	 f = { .dir = top };
	struct iovec		 iov[3];
	const char		*failed = "x";
	char			 big[6000], *p;
	size_t			 i;
	int			 dfd, fd;

	(void)state;
	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	assert_non_null(p = fs_runfile_add(&f, "empty", 0, 0444, NULL, 0));
	assert_int_equal(strncmp(p, top, strlen(top)), 0);
	assert_string_equal(p + strlen(top), "/empty");
	free(p);
	assert_non_null(p = fs_runfile_add(&f, "gitconfig", 1, 0644, big,
	    sizeof(big)));
	assert_string_equal(p + strlen(top), "/gitconfig.1");
	free(p);
	assert_non_null(p = fs_runfile_add(&f, "gitconfig", 1, 0644, "[a]\n",
	    4));
	assert_string_equal(p + strlen(top), "/gitconfig.2");
	free(p);
	iov[0].iov_base = (void *)"#!/bin/sh\nexec ";
	iov[0].iov_len = 15;
	iov[1].iov_base = (void *)"'/x y'";
	iov[1].iov_len = 6;
	iov[2].iov_base = (void *)" \"$@\"\n";
	iov[2].iov_len = 6;
	assert_non_null(p = fs_runfile_addv(&f, "git-proxy", 0555, iov, 3));
	free(p);
	/* A file another writer filled (the trust store's memfd). */
	assert_int_not_equal(fd = open(top, O_TMPFILE | O_RDWR, 0600), -1);
	assert_int_equal(write(fd, "p12", 3), 3);
	assert_non_null(p = fs_runfile_add_fd(&f, "truststore.p12", 0444,
	    fd));
	close(fd);
	free(p);
	assert_int_equal(f.n, 5);
	/* Whole pages each, as tmpfs charges them: 2 + 1 + 1 + 1. */
	assert_int_equal(fs_runfiles_size(&f), 5 * 4096);

	umask(077);
	assert_int_not_equal(dfd = open(top, O_RDONLY | O_DIRECTORY), -1);
	assert_int_equal(fs_runfiles_write(dfd, &f, &failed), 0);
	assert_null(failed);
	check_file(dfd, "empty", "", 0, 0444);
	check_file(dfd, "gitconfig.1", big, sizeof(big), 0644);
	check_file(dfd, "gitconfig.2", "[a]\n", 4, 0644);
	check_file(dfd, "git-proxy", "#!/bin/sh\nexec '/x y' \"$@\"\n", 27,
	    0555);
	check_file(dfd, "truststore.p12", "p12", 3, 0444);

	/* Written once: a second time every name is there already. */
	assert_int_equal(fs_runfiles_write(dfd, &f, &failed), -1);
	assert_string_equal(failed, "empty");
	close(dfd);
	fs_runfiles_clear(&f);
	assert_int_equal(f.n, 0);
	assert_int_equal(f.mem, 0);
}

/* A name that is a link already is refused, its target left alone. */
static void
test_no_link(void **state)
{
	struct fs_runfiles	 f = { .dir = top };
	const char		*failed;
	char			 out[256], target[256], link[PATH_MAX];
	char			*p;
	struct stat		 st;
	int			 dfd;

	(void)state;
	snprintf(out, sizeof(out), "%s/out", top);
	snprintf(target, sizeof(target), "%s/victim", top);
	snprintf(link, sizeof(link), "%s/ssh_config", out);
	assert_int_equal(mkdir(out, 0700), 0);
	assert_int_equal(symlink(target, link), 0);
	assert_non_null(p = fs_runfile_add(&f, "ssh_config", 0, 0444, "x", 1));
	free(p);
	assert_int_not_equal(dfd = open(out, O_RDONLY | O_DIRECTORY), -1);
	assert_int_equal(fs_runfiles_write(dfd, &f, &failed), -1);
	assert_string_equal(failed, "ssh_config");
	assert_int_equal(stat(target, &st), -1);
	close(dfd);
	fs_runfiles_clear(&f);
}

static int
setup(void **state)
{
	char	tmpl[] = "/tmp/pisbx-fsrunfile.XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(top, sizeof(top), "%s", tmpl);
	return 0;
}

static int
teardown(void **state)
{
	char	cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	assert_int_equal(system(cmd), 0);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_link, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
