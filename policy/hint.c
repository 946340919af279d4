/*
 * Hints: what would allow a refused target, in the words of the config
 * that refused it.  The proxy's 403 body, pisbx-run's summary at exit and
 * --explain say the same thing, from here.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

#define HINT_DEFAULT_NAME	"(embedded default)"

static int	 policy_hint_parent(const struct config *, const char *,
		    const char *, const char *, char *, size_t);

/*
 * The file a person edits: the config that decided, or, when the embedded
 * default did, the per-user file pisbx would read next time.
 */
void
policy_hint_file(const struct config *conf, char *buf, size_t len)
{
	char	*user;

	if (conf->path != NULL && strcmp(conf->path, HINT_DEFAULT_NAME) != 0) {
		snprintf(buf, len, "%s", conf->path);
		return;
	}
	if ((user = config_user_path()) == NULL) {
		snprintf(buf, len, "a config file (--config or $PISBX_CONFIG)");
		return;
	}
	snprintf(buf, len, "%s (a new file: no config was found, the "
	    "embedded default decided)", user);
	free(user);
}

void
policy_hint_entry(const struct host *h, uint16_t port, char *buf, size_t len)
{
	/*
	 * A name alone opens every port: on the web ports that is what a
	 * config customarily says, anywhere else it would open far more
	 * than was asked for (ssh, a database).
	 */
	if ((port == 443 || port == 80) && !host_is_loopback_name(h))
		snprintf(buf, len, "%s", h->text);
	else
		target_format(buf, len, h, port);
}

int
policy_hint(const struct config *conf, const struct host *h, uint16_t port,
    const char *reason, char *buf, size_t len)
{
	char	 file[1024], entry[TARGET_TEXT_MAX];

	if (len > 0)
		buf[0] = '\0';
	if (reason == NULL)
		return -1;
	if (conf->policy_from != NULL && (strcmp(reason, "no-reviewer") == 0 ||
	    strncmp(reason, "review:", 7) == 0 ||
	    strncmp(reason, "deny-list:", 10) == 0 ||
	    strcmp(reason, "non-public-address") == 0 ||
	    strcmp(reason, "host-loopback") == 0)) {
		snprintf(buf, len, "the network policy comes from %s: only "
		    "it can allow this", conf->policy_from);
		return 0;
	}
	policy_hint_file(conf, file, sizeof(file));
	policy_hint_entry(h, port, entry, sizeof(entry));
	/* The upstream proxy comes from pisbx's own config, supervised too. */
	if (strncmp(reason, "parent-", 7) == 0)
		return policy_hint_parent(conf, reason, entry, file, buf, len);
	if (strncmp(reason, "deny-list:", 10) == 0) {
		snprintf(buf, len, "\"%s\" in network.deniedDomains of %s "
		    "refuses it, whatever network.allowedDomains says",
		    reason + 10, file);
		return 0;
	}
	if (strcmp(reason, "host-loopback") == 0) {
		snprintf(buf, len, "to allow it, add \"%s:%u\" to "
		    "network.allowedDomains in %s", HOST_LOOPBACK_NAME, port,
		    file);
		return 0;
	}
	if (strcmp(reason, "non-public-address") == 0 &&
	    host_is_loopback(h)) {
		snprintf(buf, len, "to reach this machine's own services, add "
		    "\"%s:%u\" to network.allowedDomains in %s and use the "
		    "name %s", HOST_LOOPBACK_NAME, port, file,
		    HOST_LOOPBACK_NAME);
		return 0;
	}
	if (strcmp(reason, "non-public-address") == 0) {
		snprintf(buf, len, "to allow it, add the exact entry \"%s\" to "
		    "network.allowedDomains in %s (only an exact entry reaches "
		    "a non-public address)", entry, file);
		return 0;
	}
	if (strcmp(reason, "no-reviewer") == 0 ||
	    strncmp(reason, "review:", 7) == 0) {
		snprintf(buf, len, "to allow it, add \"%s\" to "
		    "network.allowedDomains in %s", entry, file);
		return 0;
	}
	return -1;
}

int
policy_hint_parent_tunnel(const struct config *conf, uint16_t port,
    char *buf, size_t len)
{
	char	 file[1024];

	if (len > 0)
		buf[0] = '\0';
	if (conf->parent == NULL)
		return -1;
	policy_hint_file(conf, file, sizeof(file));
	/*
	 * squid's default config has "http_access deny CONNECT !SSL_ports"
	 * with SSL_ports 443: the case this hint exists for.
	 */
	snprintf(buf, len, "pisbx allowed it; plain HTTP goes to the upstream "
	    "proxy (network.parentProxy in %s) inside a CONNECT, so that "
	    "its credentials never reach the client, and it refused CONNECT "
	    "to port %u, by its own policy or because it allows CONNECT to "
	    "port 443 only: then let it allow port %u (squid: \"acl "
	    "SSL_ports port %u\"), or set network.parentProxy.httpForwarding "
	    "to \"absolute-form\" in %s (the gateway then sees each request "
	    "with the credentials on it: docs/config.md)", file, port, port,
	    port, file);
	return 0;
}

/*
 * What a person can do when the upstream proxy (network.parentProxy)
 * refused or failed: its credentials, its reachability -- never a way
 * around it.  Its policy is its administrators'.
 */
static int
policy_hint_parent(const struct config *conf, const char *reason,
    const char *entry, const char *file, char *buf, size_t len)
{
	const struct parent_proxy	*pp = conf->parent;

	if (pp == NULL)
		return -1;
	if (strcmp(reason, "parent-auth") == 0) {
		if (pp->cred_file != NULL)
			snprintf(buf, len, "check the upstream proxy's "
			    "credentials in %s (network.parentProxy."
			    "credentialsFile in %s)", pp->cred_file, file);
		else if (pp->cred_env != NULL)
			snprintf(buf, len, "check the upstream proxy's "
			    "credentials in $%s (network.parentProxy."
			    "credentialsEnv in %s)", pp->cred_env, file);
		else
			snprintf(buf, len, "the upstream proxy wants "
			    "credentials: set network.parentProxy."
			    "credentialsFile or credentialsEnv in %s", file);
		return 0;
	}
	if (strcmp(reason, "parent-refused") == 0) {
		snprintf(buf, len, "pisbx allowed it; the upstream proxy "
		    "(network.parentProxy in %s) refused it by its own policy, "
		    "which its administrators set", file);
		return 0;
	}
	if (strcmp(reason, "parent-method") == 0) {
		snprintf(buf, len, "TRACE and TRACK are not sent to the "
		    "upstream proxy as proxy requests, since its echo would "
		    "carry its credentials; with network.parentProxy."
		    "httpForwarding \"tunnel\" (the default) in %s they go "
		    "inside a tunnel", file);
		return 0;
	}
	if (strcmp(reason, "parent-error") == 0) {
		snprintf(buf, len, "check that the upstream proxy "
		    "(network.parentProxy in %s) is up and can reach it; a "
		    "host this machine reaches directly goes in "
		    "network.parentProxy.noProxy (\"%s\")", file, entry);
		return 0;
	}
	return -1;
}
