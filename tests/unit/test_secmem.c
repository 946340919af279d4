/*
 * Unit tests for common/secmem.c: the comparison sees every byte, the
 * wipe zeroes exactly what it is given, randomness fills large buffers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/secmem.h"

static void
test_cmp(void **state)
{
	char	a[64], b[64];
	size_t	i;

	(void)state;
	memset(a, 'x', sizeof(a));
	memcpy(b, a, sizeof(b));
	assert_int_equal(secmem_cmp(a, b, sizeof(a)), 0);
	assert_int_equal(secmem_cmp(a, b, 0), 0);
	/* A difference anywhere, including the first and last byte. */
	for (i = 0; i < sizeof(b); i++) {
		b[i] ^= 0x01;
		assert_int_equal(secmem_cmp(a, b, sizeof(a)), 1);
		assert_int_equal(secmem_cmp(b, a, sizeof(a)), 1);
		b[i] = a[i];
	}
	b[10] = (char)0x80;
	assert_int_equal(secmem_cmp(a, b, 10), 0);
	assert_int_equal(secmem_cmp(a, b, 11), 1);
}

static void
test_wipe(void **state)
{
	char	buf[16];
	size_t	i;

	(void)state;
	memset(buf, 'S', sizeof(buf));
	secmem_wipe(buf + 4, 8);
	for (i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], i >= 4 && i < 12 ? 0 : 'S');
}

static void
test_random(void **state)
{
	unsigned char	a[4096], b[4096];
	size_t		i, zero = 0;

	(void)state;
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	assert_int_equal(secmem_random(a, sizeof(a)), 0);
	assert_int_equal(secmem_random(b, sizeof(b)), 0);
	assert_int_equal(secmem_random(a, 0), 0);
	assert_int_not_equal(memcmp(a, b, sizeof(a)), 0);
	/* The last bytes were written too (no short read taken for all). */
	for (i = sizeof(a) - 64; i < sizeof(a); i++)
		zero += a[i] == 0;
	assert_true(zero < 16);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmp),
		cmocka_unit_test(test_wipe),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
