/*
 * tlsprobe: tlsmod_load() as the programs call it, from wherever this
 * executable is copied (tests/integration/tls-module.sh puts it beside a
 * module, or under a bin/ whose ../lib/pisbx/ holds one).  Loaded, it
 * makes a CA and prints "loaded" and the first line of its certificate;
 * else prints the loader's error and exits 1.  Called twice, the second
 * call must answer the same (the result is kept).
 *
 *   tlsprobe truststore BUNDLE OUT
 *	Also write the Java trust store of the PEM bundle BUNDLE to OUT.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proxy/tlsmod.h"

int
main(int argc, char **argv)
{
	const struct tlsmod_ops	*ops, *again;
	struct tlsmod_ca_opts	 o = { 0 };
	struct tlsmod_ca	*ca;
	char			 err[1024], err2[1024];

	ops = tlsmod_load(err, sizeof(err));
	again = tlsmod_load(err2, sizeof(err2));
	if (ops != again || (ops == NULL && strcmp(err, err2) != 0)) {
		printf("second load differs\n");
		return 2;
	}
	if (ops == NULL) {
		printf("%s\n", err);
		return 1;
	}
	if ((ca = ops->ca_new(&o, err, sizeof(err))) == NULL) {
		printf("ca_new: %s\n", err);
		return 1;
	}
	printf("loaded\n%.27s\n", ops->ca_pem(ca));
	if (argc == 4 && strcmp(argv[1], "truststore") == 0) {
		int	 fd;

		if ((fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC,
		    0644)) == -1) {
			perror(argv[3]);
			return 1;
		}
		if (ops->truststore(ca, argv[2], fd, err, sizeof(err)) == -1) {
			printf("truststore: %s\n", err);
			return 1;
		}
		close(fd);
	}
	ops->ca_free(ca);
	return 0;
}
