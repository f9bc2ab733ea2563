/* Byte truth of `make quality` (scripts/quality/truth.py), independent of
 * fsim: the length of a longest common subsequence of the BYTES of two
 * files, exact.
 *
 * Input on stdin: pairs of paths, each path ended by a NUL byte
 * (a\0b\0a\0b\0...). Output: one line per pair, the LCS length in bytes.
 *
 * Method: the common prefix and suffix are removed (they belong to some
 * longest common subsequence: LCS(pXs, pYs) = |p| + LCS(X, Y) + |s|), then
 * the bit-parallel LCS-length algorithm of Allison and Dix (1986) in
 * Hyyro's formulation (2004): a bit vector V over the shorter string A, one
 * step per byte c of the longer string B,
 *     U = V & PM[c];   V = (V + U) | (V - U)
 * with PM[c] the positions of c in A; at the end the LCS length is the
 * number of zero bits of V among A's |A| bits. Exact, O(|A| |B| / 64) word
 * operations, O(256 |A| / 8) bytes for PM.
 *
 * Build: cc -O2 -o bytelcs bytelcs.c (truth.py does it on first use).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    if (ferror(f)) {
        perror(path);
        exit(2);
    }
    fclose(f);
    *len = n;
    return buf;
}

/* LCS length of a[0..n) and b[0..m), n <= m, bit-parallel. */
static uint64_t lcs_bits(const unsigned char *a, size_t n, const unsigned char *b, size_t m)
{
    if (n == 0)
        return 0;
    size_t w = (n + 63) / 64;
    uint64_t *pm = calloc(256 * w, sizeof(uint64_t));
    uint64_t *v = malloc(w * sizeof(uint64_t));
    if (!pm || !v) {
        fprintf(stderr, "bytelcs: out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < n; i++)
        pm[(size_t)a[i] * w + i / 64] |= (uint64_t)1 << (i % 64);
    for (size_t k = 0; k < w; k++)
        v[k] = ~(uint64_t)0;
    for (size_t j = 0; j < m; j++) {
        const uint64_t *p = pm + (size_t)b[j] * w;
        uint64_t carry = 0;
        for (size_t k = 0; k < w; k++) {
            uint64_t x = v[k], u = x & p[k];
            uint64_t s = x + u;
            uint64_t c = s < x;
            s += carry;
            c |= s < carry;
            carry = c;
            v[k] = s | (x & ~p[k]);
        }
    }
    uint64_t ones = 0;
    for (size_t k = 0; k < w; k++) {
        uint64_t x = v[k];
        if (k == w - 1 && n % 64)
            x &= ((uint64_t)1 << (n % 64)) - 1;
        ones += (uint64_t)__builtin_popcountll(x);
    }
    free(pm);
    free(v);
    return (uint64_t)n - ones;
}

static uint64_t lcs(const unsigned char *a, size_t n, const unsigned char *b, size_t m)
{
    size_t pre = 0;
    while (pre < n && pre < m && a[pre] == b[pre])
        pre++;
    size_t suf = 0;
    while (suf < n - pre && suf < m - pre && a[n - 1 - suf] == b[m - 1 - suf])
        suf++;
    a += pre;
    b += pre;
    n -= pre + suf;
    m -= pre + suf;
    uint64_t mid = n <= m ? lcs_bits(a, n, b, m) : lcs_bits(b, m, a, n);
    return pre + suf + mid;
}

/* One NUL-ended path from stdin into *buf; 0 at the end of the input. */
static int read_path(char **buf, size_t *cap)
{
    size_t n = 0;
    int c;
    while ((c = getchar()) != EOF && c != 0) {
        if (n + 1 >= *cap) {
            *cap = *cap ? *cap * 2 : 256;
            *buf = realloc(*buf, *cap);
        }
        (*buf)[n++] = (char)c;
    }
    if (n == 0 && c == EOF)
        return 0;
    if (n + 1 >= *cap) {
        *cap = *cap ? *cap * 2 : 256;
        *buf = realloc(*buf, *cap);
    }
    (*buf)[n] = 0;
    return 1;
}

int main(void)
{
    char *pa = NULL, *pb = NULL;
    size_t ca = 0, cb = 0;
    while (read_path(&pa, &ca)) {
        if (!read_path(&pb, &cb)) {
            fprintf(stderr, "bytelcs: odd number of paths\n");
            return 2;
        }
        size_t n, m;
        unsigned char *a = slurp(pa, &n), *b = slurp(pb, &m);
        printf("%llu\n", (unsigned long long)lcs(a, n, b, m));
        fflush(stdout);
        free(a);
        free(b);
    }
    return 0;
}
