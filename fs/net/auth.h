/* Trust between daemons (auth.c): the cluster key and the challenge built on it.
 *
 * A connection begins with a mutual challenge. The client sends a random nonce nc; the
 * server answers with its own nonce ns, a session id and HMAC(K, "tfs-server" nc ns),
 * proving it holds the key K; the client checks it and answers HMAC(K, "tfs-client" ns nc);
 * the server checks that. Both then hold the session key HMAC(K, "tfs-session" nc ns), under
 * which every request's header (with the requester's uid and gids) carries a MAC. The key
 * itself never travels, nor is it in Redis; nonces are fresh for each connection, so an
 * answer recorded from one does not open another.
 *
 * tfs_net_key_load runs once at start-up, before any thread; the rest only reads the key
 * and may run on any thread. */
#ifndef TFS_NET_AUTH_H
#define TFS_NET_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "hmac.h"

#define TFS_NET_NONCE 32
/* A key file holds at most this many bytes (its whole content is the key, a final newline
 * aside); fewer than TFS_NET_KEY_MIN is refused as guessable. */
#define TFS_NET_KEY_MAX 4096
#define TFS_NET_KEY_MIN 16

/* Reads the key from path: 0; -EPERM when the file is readable or writable by others than
 * its owner and root, or its owner is neither root nor the daemon's user (logged, key not
 * taken); -EINVAL shorter than TFS_NET_KEY_MIN or longer than TFS_NET_KEY_MAX; -errno of
 * open/read. The bytes are kept in memory the process does not dump. */
int tfs_net_key_load(const char *path);
/* Whether a key was loaded. */
int tfs_net_key_present(void);

/* The three MACs of the challenge (HMAC-SHA-256 under the cluster key). */
void tfs_net_mac_server(const uint8_t *nc, const uint8_t *ns, uint8_t out[TFS_SHA256_LEN]);
void tfs_net_mac_client(const uint8_t *nc, const uint8_t *ns, uint8_t out[TFS_SHA256_LEN]);
void tfs_net_session_key(const uint8_t *nc, const uint8_t *ns, uint8_t out[TFS_SHA256_LEN]);
/* A request's MAC under a session key: of a (its header, MAC field zeroed) and b (the name
 * that follows it). */
void tfs_net_mac_request(const uint8_t *sk, const void *a, size_t alen, const void *b,
			 size_t blen, uint8_t out[TFS_SHA256_LEN]);
/* n random bytes: 0 or -EIO. */
int tfs_net_random(void *buf, size_t n);

#endif
