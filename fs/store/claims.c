/* Claims of names in their parent directory (claims.h), and the claims whose answer was
 * lost. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "store/claims.h"
#include "store/conn.h"
#include "store/dircache.h"
#include "store/mirror.h"
#include "store/store.h"
#include "store/writer.h"

/* --- claims whose answer was lost --- */

/* A claim sent but not answered (Redis stalled past the command timeout, or went away)
 * may still have taken the name when Redis went on. Such names are remembered here: a
 * retry of the same name by this node takes its own claim over, and the resync after
 * Redis came back gives the others back. */
struct lost_claim {
	char *name;
	char type;
	struct lost_claim *next;
};
static pthread_mutex_t lost_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lost_claim *lost_claims;

/* Which record a claimed entry of type needs: tensor or dir. */
static const char *record_kind(char type)
{
	return type == 'd' ? "dir" : "tensor";
}

/* The entry of name still of type and with no record behind it, in one step. remove:
 * also take it out. 1 when so, 0 when not, -EIO. */
static const char stale_claim_lua[] =
	"if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end "
	"if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end "
	"if ARGV[3] == '1' then redis.call('HDEL', KEYS[1], ARGV[1]) end "
	"return 1";

static int stale_claim(const char *name, char type, int remove)
{
	char parent[TFS_PATH_MAX], ek[TFS_KEYMAX], rk[TFS_KEYMAX], t[2] = { type, 0 };
	const char *base;
	redisReply *r;
	int rc;

	tfs_split(name, parent, sizeof(parent), &base);
	if (tfs_key(ek, sizeof(ek), "dirents", parent) ||
	    tfs_key(rk, sizeof(rk), record_kind(type), name))
		return -ENAMETOOLONG;
	r = tfs_writer_read(&rc, "EVAL %s 2 %s %s %s %s %s", stale_claim_lua, ek, rk, base, t,
			  remove ? "1" : "0");
	rc = r && r->type == REDIS_REPLY_INTEGER ? (int)r->integer : -EIO;
	freeReplyObject(r);
	if (rc == 1 && remove)
		tfs_dircache_set_type(parent, base, 0);
	return rc;
}

static void lost_claim_add(const char *name, char type)
{
	struct lost_claim *l = calloc(1, sizeof(*l));

	if (!l || !(l->name = strdup(name))) {
		free(l);
		tfs_log(LOG_ERR, "out of memory: the lost claim of /%s stays until unmount", name);
		return;
	}
	l->type = type;
	pthread_mutex_lock(&lost_mu);
	l->next = lost_claims;
	lost_claims = l;
	pthread_mutex_unlock(&lost_mu);
}

void tfs_store_claim_maybe_lost(const char *name, char type)
{
	lost_claim_add(name, type);
}

/* Takes name's lost claim of type off the list: 1 when it was there. */
static int lost_claim_take(const char *name, char type)
{
	struct lost_claim **p, *l;
	int found = 0;

	pthread_mutex_lock(&lost_mu);
	for (p = &lost_claims; *p; p = &(*p)->next) {
		if ((*p)->type == type && strcmp((*p)->name, name) == 0) {
			l = *p;
			*p = l->next;
			free(l->name);
			free(l);
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&lost_mu);
	return found;
}

int tfs_store_claims_settle(int (*mine)(const char *name))
{
	struct lost_claim *list, *l, *keep = NULL;
	int rc = 0, e;

	pthread_mutex_lock(&lost_mu);
	list = lost_claims;
	lost_claims = NULL;
	pthread_mutex_unlock(&lost_mu);
	while ((l = list)) {
		list = l->next;
		/* A name this node made since (a retry) is its own by now: nothing to give. */
		e = l->type == 't' && mine(l->name) ? 0 : stale_claim(l->name, l->type, 1);
		if (e < 0) {
			rc = e;
			l->next = keep;
			keep = l;
			continue;
		}
		if (e == 1)
			tfs_log(LOG_NOTICE, "/%s: a claim whose answer was lost, given back", l->name);
		free(l->name);
		free(l);
	}
	if (keep) {
		pthread_mutex_lock(&lost_mu);
		for (l = keep; l->next; l = l->next)
			;
		l->next = lost_claims;
		lost_claims = keep;
		pthread_mutex_unlock(&lost_mu);
	}
	return rc;
}

/* --- the parents' checks of claims sent together --- */

/* One EXISTS of a parent's record, sent behind every claim that shares it: a claim is
 * covered by any check of its parent that Redis runs after it (tfs_store_link_send). */
struct tfs_claim_check {
	char *dkey;
	struct tfs_writer_call *call;    /* sent; NULL: not yet, or failed (rc) */
	redisReply *reply;           /* its answer, once awaited */
	int rc, sent, waited, refs;
	struct tfs_claim_check *next;    /* the batch's, until tfs_store_claims_end */
};

static __thread struct {
	int on;
	struct tfs_claim_check *checks;
} batch;

void tfs_store_claims_begin(void)
{
	batch.on = 1;
}

static void check_send(struct tfs_claim_check *k)
{
	k->sent = 1;
	k->call = tfs_writer_sendf(&k->rc, "EXISTS %s", k->dkey);
}

void tfs_store_claims_end(void)
{
	struct tfs_claim_check *k;

	while ((k = batch.checks)) {
		batch.checks = k->next;
		k->next = NULL;
		if (!k->sent)
			check_send(k);
	}
	batch.on = 0;
}

/* The batch's check of dkey not sent yet, made when there is none (a reference taken);
 * NULL when out of memory. */
static struct tfs_claim_check *check_get(const char *dkey)
{
	struct tfs_claim_check *k;

	for (k = batch.checks; k; k = k->next) {
		if (!k->sent && strcmp(k->dkey, dkey) == 0) {
			k->refs++;
			return k;
		}
	}
	k = calloc(1, sizeof(*k));
	if (!k || !(k->dkey = strdup(dkey))) {
		free(k);
		return NULL;
	}
	k->refs = 1;
	k->next = batch.checks;
	batch.checks = k;
	return k;
}

/* Drops a reference; the last one frees k, which is then out of the batch's list. */
static void check_put(struct tfs_claim_check *k)
{
	struct tfs_claim_check **p;

	if (--k->refs)
		return;
	for (p = &batch.checks; *p; p = &(*p)->next) {
		if (*p == k) {
			*p = k->next;
			break;
		}
	}
	/* Every call sent is awaited, whoever asks. */
	if (k->call && !k->waited)
		freeReplyObject(tfs_writer_wait(k->call, &k->rc));
	freeReplyObject(k->reply);
	free(k->dkey);
	free(k);
}

/* Whether the parent's record was there behind the claim: 1, 0, or -EIO (the check
 * failed or could not be made). */
static int check_result(struct tfs_claim_check *k)
{
	if (!k->sent)
		check_send(k);       /* awaited before tfs_store_claims_end: nothing more joins it */
	if (k->call && !k->waited) {
		k->reply = tfs_writer_wait(k->call, &k->rc);
		k->waited = 1;
	}
	if (!k->reply || k->reply->type != REDIS_REPLY_INTEGER)
		return -EIO;
	return k->reply->integer ? 1 : 0;
}

int tfs_store_link_send(const char *name, char type, const struct tfs_dirrec *parent_rec,
		      struct tfs_store_claim **claim)
{
	char parent[TFS_PATH_MAX], key[TFS_KEYMAX], dkey[TFS_KEYMAX], t[2] = { type, 0 };
	const char *base;
	struct tfs_dirrec d;
	struct tfs_store_claim *c;
	int rc;

	if ((rc = tfs_name_check_len(name, TFS_PATH_MAX - 1)))
		return rc;         /* FUSE passes names up to 1024 bytes; NAME_MAX is 255 */
	tfs_split(name, parent, sizeof(parent), &base);
	if ((rc = tfs_key(key, sizeof(key), "dirents", parent)))
		return rc;
	/* The parent's record (usually cached) says it exists. The claim goes through the
	 * write-behind connection, not a script: Redis 7.0 does not apply NOLOOP to writes a
	 * script makes, and each claim would then drop this node's cached directory. So
	 * that another node's rmdir cannot leave the name in no directory, the parent's
	 * record is checked again behind the claim, in the same round trip: rmdir is one
	 * script (tfs_store_rmdir) that refuses a directory with entries, so either it ran
	 * before the claim and the record is gone (the claim is undone), or it sees the
	 * entry and refuses. Claims sent together share their parent's check, behind the
	 * last of them (tfs_store_claims_begin). */
	if (!parent_rec && (rc = tfs_store_dir(parent, &d)))
		return rc;
	if ((rc = tfs_key(dkey, sizeof(dkey), "dir", parent)))
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (batch.on && !(c->check = check_get(dkey))) {
		free(c);
		return -ENOMEM;
	}
	c->set = tfs_writer_sendf(&rc, "HSETNX %s %s %s", key, base, t);
	if (c->set && !c->check)
		c->exists = tfs_writer_sendf(&rc, "EXISTS %s", dkey);
	if (!c->set || (!c->exists && !c->check)) {
		int err = rc;

		/* The check could not be queued: the claim, if it took the name, gives it back. */
		if (c->set) {
			redisReply *r = tfs_writer_wait(c->set, &rc);

			if (r && r->type == REDIS_REPLY_INTEGER && r->integer == 1)
				tfs_store_unlink(name);
			freeReplyObject(r);
		}
		if (c->check)
			check_put(c->check);
		free(c);
		return err == -ENOMEM ? err : -EIO;
	}
	*claim = c;
	return 0;
}

int tfs_store_link_wait(const char *name, char type, struct tfs_store_claim *claim)
{
	char parent[TFS_PATH_MAX];
	const char *base;
	redisReply *r, *e = NULL;
	int rc, rc2, there;

	r = tfs_writer_wait(claim->set, &rc);
	if (claim->check) {
		there = check_result(claim->check);
		check_put(claim->check);
	} else {
		e = tfs_writer_wait(claim->exists, &rc2);
		there = !e || e->type != REDIS_REPLY_INTEGER ? -EIO : e->integer ? 1 : 0;
		freeReplyObject(e);
	}
	free(claim);
	if (!r) {
		if (rc != -ENOMEM && rc != -EPROTO)
			lost_claim_add(name, type);   /* sent: it may yet take the name */
		return rc == -ENOMEM ? rc : -EIO;
	}
	rc = r->type != REDIS_REPLY_INTEGER ? -EIO : r->integer == 1 ? 0 : -EEXIST;
	freeReplyObject(r);
	/* Taken by this node's own earlier claim whose answer was lost: a retry, ours. */
	if (rc == -EEXIST && lost_claim_take(name, type)) {
		int st = stale_claim(name, type, 0);

		if (st == 1)
			rc = 0;
		else if (st < 0)
			lost_claim_add(name, type);
	}
	tfs_split(name, parent, sizeof(parent), &base);
	if (rc == 0 && there != 1) {
		/* The parent went just before the claim (or its check failed): give the name
		 * back, which also removes the entries hash the claim made anew. */
		tfs_store_unlink(name);
		rc = there == 0 ? -ENOENT : -EIO;
		tfs_dircache_forget(parent);
	}
	if (rc == 0)
		tfs_dircache_set_type(parent, base, type);
	return rc;
}

int tfs_store_link(const char *name, char type)
{
	struct tfs_store_claim *claim;
	int rc = tfs_store_link_send(name, type, NULL, &claim);

	return rc ? rc : tfs_store_link_wait(name, type, claim);
}
