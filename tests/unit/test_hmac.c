/* core/hmac.c: SHA-256 against FIPS 180-2's examples, HMAC-SHA-256 against RFC 4231's
 * test cases (the key that proves one daemon to another, fs/net/auth.c). */
#include <string.h>

#include "hmac.h"
#include "strutil.h"
#include "tap.h"

static void unhex(const char *h, uint8_t *out, size_t *n)
{
	*n = strlen(h) / 2;
	tfs_hex_decode(h, *n * 2, out, *n);
}

static int sha_is(const void *d, size_t n, const char *want)
{
	struct tfs_sha256 s;
	uint8_t out[32];
	char hex[65];

	tfs_sha256_init(&s);
	tfs_sha256_update(&s, d, n);
	tfs_sha256_final(&s, out);
	tfs_hex_encode(out, 32, hex);
	return !strcmp(hex, want);
}

int main(void)
{
	static const struct { const char *key, *data, *mac; } rfc[] = {
		{ "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
		  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
		{ "4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
		  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		  "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
		  "dddddddddddddddddddddddd",
		  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
		{ "0102030405060708090a0b0c0d0e0f10111213141516171819",
		  "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
		  "cdcdcdcdcdcdcdcdcdcdcdcd",
		  "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
		{ NULL,     /* 131 bytes of 0xaa */
		  "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579"
		  "202d2048617368204b6579204669727374",
		  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
		{ NULL,     /* 131 bytes of 0xaa */
		  "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c"
		  "6f636b2d73697a65206b657920616e642061206c6172676572207468616e20626c6f636b2d"
		  "73697a6520646174612e20546865206b6579206e6565647320746f20626520686173686564"
		  "206265666f7265206265696e6720757365642062792074686520484d414320616c676f7269"
		  "74686d2e",
		  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
	};
	static char million[1000000];
	uint8_t key[200], data[300], mac[32], want[32];
	size_t kn, dn, wn;

	ok(sha_is("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
	   "SHA-256 of nothing");
	ok(sha_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
	   "SHA-256 of abc");
	ok(sha_is("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
	   "SHA-256 of the 56-byte message (padding into a second block)");
	memset(million, 'a', sizeof(million));
	ok(sha_is(million, sizeof(million),
		  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
	   "SHA-256 of a million a's");
	for (size_t i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
		const void *part[1];
		size_t len[1];

		if (rfc[i].key) {
			unhex(rfc[i].key, key, &kn);
		} else {
			kn = 131;
			memset(key, 0xaa, kn);
		}
		unhex(rfc[i].data, data, &dn);
		unhex(rfc[i].mac, want, &wn);
		part[0] = data;
		len[0] = dn;
		tfs_hmac_sha256(key, kn, part, len, 1, mac);
		ok(tfs_mac_equal(mac, want, 32), "RFC 4231 test case %zu", i < 4 ? i + 1 : i + 2);
	}
	{
		/* The data in three parts is the data whole. */
		const void *part[3] = { data, data + 10, data + 11 };
		size_t len[3] = { 10, 1, dn - 11 };

		tfs_hmac_sha256(key, kn, part, len, 3, mac);
		ok(tfs_mac_equal(mac, want, 32), "the data in parts: the same MAC");
		mac[31] ^= 1;
		ok(!tfs_mac_equal(mac, want, 32), "one bit changed: not equal");
	}
	printf("%d checks, %d failed\n", checks, failures);
	return failures != 0;
}
