/* A node's UCX address in Redis (peer.c): <prefix>:ucx:<node>, set by the node's daemon
 * beside its lease and with the lease's lifetime, read by the daemons that ask it for
 * bytes. The value is opaque here (fs/net/peer_rec.h makes and parses it). Both run on the
 * calling thread's connection (store/conn.h), so they fail while Redis is down or this
 * node's lease is another daemon's. */
#ifndef TFS_STORE_PEER_H
#define TFS_STORE_PEER_H

#include <stddef.h>

/* Sets this node's record to value for ttl_ms, only while the node's lease still holds
 * token (one script: a daemon that lost its lease never overwrites its successor's
 * address). 0 set, -EBUSY the lease is not ours, -EIO, -EPROTO. */
int tfs_store_peer_publish(const char *token, const char *value, int ttl_ms);
/* node's record into buf (NUL-terminated): 0, -ENOENT none, -E2BIG longer than size - 1,
 * -EIO, -EPROTO. */
int tfs_store_peer_get(const char *node, char *buf, size_t size);

#endif
