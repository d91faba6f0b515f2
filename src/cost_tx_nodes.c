/*
 * cost_tx_nodes: the closed form node by node (gather_nodes), what table
 * builds spend their time in. A node's receivers form a box of piece
 * indices, so their sums come per dimension from the dense tables; what
 * one edge's entries read again and again (a dimension's slice of a node's
 * problem, and whole nodes) is remembered over the edge's table (gn_memo),
 * and without a sink most nodes are bounded rather than visited. The
 * results are the same doubles as cost_tx.c's receiver by receiver forms.
 */
#include "cost_internal.h"

#include <stdlib.h>
#include <string.h>

/* What gather_nodes remembers over one edge's table (every entry of it).
 *
 * A slice is one dimension of one node's problem: the receiver pieces
 * [rlo, rlo + e) of the node's box, the sender's box [lo, hi) in that
 * dimension (lo = hi = 0: the sender has no task on the node) and the
 * direction. Its content is what gn_fill reads from the dense sums (per
 * receiver piece: the elements and pieces it needs and what of them the
 * sender's box holds), the box extents e and hi - lo, and the block of the
 * overlap matrix at those receiver and sender pieces. The same slice comes
 * back for many entries (every config pair with these degrees in this
 * dimension), so it is read once per edge; slices of equal content share an
 * id.
 *
 * A node's receivers (their slowest time, their elements and their
 * elements from other nodes, visited in order) are a function of its four
 * slices' contents, in either direction: the values, the self overlaps,
 * and the box shapes, which say which of the node's GPUs holds which
 * receiver and which sender task (both boxes are aligned, so a node's GPUs
 * hold them in row-major order of the box; a sender with no task on the
 * node has empty boxes). So a node whose four ids were visited before need
 * not be visited again: its results are the same doubles. The edge keeps
 * the last node visited at each of GN_NODES places (190 KB, well inside a
 * core's L2), where no sink wants the receivers' counts. */
enum { GN_CHUNK = 1 << 16, GN_NODES = 1 << 12, GN_GENS = 1 << 29 };
/* One content of slices (its id is its index in gn_memo's slice). */
typedef struct gn_slice {
    uint64_t chash;  /* of v's doubles */
    const double *v; /* e, hi - lo, then va, vn, vo, von [e] each, then the overlap block [e][hi - lo] */
    double agg[8];   /* gn_fill's sums, maxima and minima over the box */
} gn_slice;
typedef struct gn_node {
    uint32_t id[NDIMS];
    uint32_t tag; /* 0: empty; else gn_tag: the memo's generation and gn_ctx's held */
    double slowest, elems, far;
} gn_node;
/* A node as a sink saw it (gn_visit_sink_memo): its results and its
 * receivers' front of counts (a node's is 1 or 2 counts mostly: Inception-v3
 * at 64 GPUs, 7.5 M nodes computed: 5.5 M of 1, 1.4 M of 2, 1.2 k of more
 * than 4). */
enum { GN_OFFERS = 4, GN_SNODES = 1 << 11 };
typedef struct gn_snode {
    uint32_t id[NDIMS];
    uint32_t tag; /* 0: empty; else gn_tag */
    int n;        /* offers */
    double slowest, elems, far;
    rp_cand offer[GN_OFFERS];
} gn_snode;

/* Slice keys come in families: a dimension, a direction, the two degrees
 * and the box's extent e. Within one, the receiver box starts at a multiple
 * of e and the sender's box [lo, hi) is aligned too (both are boxes of
 * aligned power-of-two blocks of tasks), so a key has a place of its own:
 * (rlo / e) x 2 Ds + the sender box's place in a heap over the Ds pieces
 * (0: no box; Ds / se + lo / se for a box of se pieces). */
enum { GN_LOG2_BOX = 7 }; /* values of log2 e: e up to GN_BOX */
enum { GN_FAMS = NDIMS * 2 * MAX_LOG2 * MAX_LOG2 * GN_LOG2_BOX }; /* dimension, direction, each degree, e */

typedef struct gn_memo {
    gn_slice *slice; /* the distinct contents */
    uint32_t n_slice, cap_slice;
    /* per key family (see GN_FAMS), allocated on first use: each key's
     * content id + 1 (0: not seen in this edge); the families used in this
     * edge, to clear */
    uint32_t *fam[GN_FAMS];
    size_t fam_len[GN_FAMS];
    unsigned char fam_on[GN_FAMS]; /* used in this edge: listed in fam_used */
    int fam_used[GN_FAMS], n_fam_used;
    /* [cap_hash], half full at most: each content's id + 1 */
    uint32_t *by_content;
    uint32_t cap_hash;
    double **chunk; /* slice contents, in chunks that never move: n_chunk of them, [cur] filling */
    int n_chunk, cur, used;
    gn_node *node;   /* [GN_NODES], NULL until a node is visited */
    gn_snode *snode; /* [GN_SNODES], the same where a sink wants the counts */
    uint32_t gen;    /* one more each reset: a cached node of an edge before has another in its tag */
} gn_memo;

typedef struct gn_ctx {
    const double *sum[NDIMS];
    const int *cnt[NDIMS];
    const long *mat[NDIMS];
    int row[NDIMS], ms_r[NDIMS], ms_s[NDIMS];
    const config *rcv, *snd;
    int Tr, Ts, Br, Bs, dir;
    tx_prices pr;
    tx_prices prb;                   /* the bound's prices: pr, or with the largest per-pair link within a node */
    const double *plat, *pinv;       /* per-pair links within a node (pair_form_ok), or NULL */
    int gpn;
    gn_memo *memo;
    /* per dimension, the node's slice: for the pieces of the box, everything
     * the receiver piece needs (elements, pieces) and what of it the
     * sender's tasks on the node hold */
    int rlo[NDIMS], ext[NDIMS];
    const double *va[NDIMS], *vn[NDIMS], *vo[NDIMS], *von[NDIMS];
    const uint64_t *nz[NDIMS]; /* on per-pair links: per receiver piece, the sender pieces it overlaps (bits) */
    uint32_t id[NDIMS];
    /* what the slices above are of: per dimension, the sender's box
     * [lo, hi), whether the sender had tasks on that node (held: 0 none
     * yet), and the slices' sums, maxima and minima */
    int lo[NDIMS], hi[NDIMS], held;
    double agg[NDIMS][8];
} gn_ctx;

/* A 64-bit mixer (splitmix64's finaliser), for the slices' digests. */
static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Doubles of a slice's content (gn_slice v), from its extents. */
static int slice_len(const double *v)
{
    int e = (int)v[0], se = (int)v[1];
    return 2 + 4 * e + e * se;
}

/* Frees a scratch's memo (scratch_free); NULL: nothing. */
void memo_free(gn_memo *mm)
{
    if (!mm) return;
    for (int i = 0; i < mm->n_chunk; i++) free(mm->chunk[i]);
    free(mm->chunk);
    free(mm->slice);
    for (int f = 0; f < GN_FAMS; f++) free(mm->fam[f]);
    free(mm->by_content);
    free(mm->node);
    free(mm->snode);
    free(mm);
}

/* Forgets every slice and node, keeping the room for the next edge. */
static void memo_reset(gn_memo *mm)
{
    mm->n_slice = 0;
    for (int k = 0; k < mm->n_fam_used; k++) {
        const int f = mm->fam_used[k];
        memset(mm->fam[f], 0, sizeof(uint32_t) * mm->fam_len[f]);
        mm->fam_on[f] = 0;
    }
    mm->n_fam_used = 0;
    if (mm->by_content) memset(mm->by_content, 0, sizeof *mm->by_content * mm->cap_hash);
    mm->cur = -1;
    mm->used = 0;
    /* the node caches (550 KB together) are not cleared (that would take a
     * fifth of a small build's time) but their tags made stale; cleared
     * only when the generations run out */
    if (++mm->gen == GN_GENS) {
        mm->gen = 0;
        if (mm->node) memset(mm->node, 0, sizeof *mm->node * GN_NODES);
        if (mm->snode) memset(mm->snode, 0, sizeof *mm->snode * GN_SNODES);
    }
}

/* Lends el (one edge's lists, fresh) the memo of sc (one thread's
 * scratch), reset: the room of the edges before, warm in the caches,
 * without asking the system for it again. Every edge_lists that tx_eval is
 * given has one. */
void memo_lend(tx_scratch *sc, edge_lists *el)
{
    if (!sc->memo) {
        sc->memo = lw_calloc(1, sizeof *sc->memo);
        sc->memo->cur = -1;
    } else {
        memo_reset(sc->memo);
    }
    el->memo = sc->memo;
}

/* Places content id idx of digest h in an open-addressing table of cap slots. */
static void memo_put(uint32_t *tab, uint32_t cap, uint64_t h, uint32_t idx)
{
    uint32_t i = (uint32_t)h & (cap - 1);
    while (tab[i]) i = (i + 1) & (cap - 1);
    tab[i] = idx + 1;
}

/* The content table grown to cap slots, every content placed again. */
static void memo_rehash(gn_memo *mm, uint32_t cap)
{
    free(mm->by_content);
    mm->by_content = lw_calloc(cap, sizeof(uint32_t));
    for (uint32_t k = 0; k < mm->n_slice; k++) memo_put(mm->by_content, cap, mm->slice[k].chash, k);
    mm->cap_hash = cap;
}

/* Where the key of dimension d's slice [rlo, rlo + e) x [lo, hi) sits in
 * its family's table (allocated, and listed for clearing, on first use). */
static uint32_t *memo_place(gn_ctx *g, int d, int rlo, int e, int lo, int hi)
{
    gn_memo *mm = g->memo;
    const int ls = ilog2(g->snd->deg[d]), lr = ilog2(g->rcv->deg[d]), le = ilog2(e), se = hi - lo;
    const int f = (((d * 2 + g->dir) * MAX_LOG2 + ls) * MAX_LOG2 + lr) * GN_LOG2_BOX + le;
    const size_t Ds = (size_t)g->snd->deg[d];
    if (!mm->fam[f]) {
        mm->fam_len[f] = (size_t)(g->rcv->deg[d] >> le) * 2 * Ds;
        mm->fam[f] = lw_calloc(mm->fam_len[f], sizeof(uint32_t));
    }
    if (!mm->fam_on[f]) {
        mm->fam_on[f] = 1;
        mm->fam_used[mm->n_fam_used++] = f;
    }
    /* se, Ds and lo / se's divisor are powers of two (aligned boxes): shifts, not divisions */
    const int lse = se ? ilog2(se) : 0;
    return &mm->fam[f][(size_t)(rlo >> le) * 2 * Ds + (se ? (Ds >> lse) + (size_t)(lo >> lse) : 0)];
}

/* Room for a slice's content of len doubles at the arena's end. */
static double *memo_space(gn_memo *mm, int len)
{
    if (mm->cur < 0 || mm->used + len > GN_CHUNK) {
        if (++mm->cur == mm->n_chunk) {
            mm->chunk = lw_realloc(mm->chunk, sizeof(double *) * (size_t)(mm->n_chunk + 1));
            mm->chunk[mm->n_chunk++] = lw_malloc(sizeof(double) * GN_CHUNK);
        }
        mm->used = 0;
    }
    return mm->chunk[mm->cur] + mm->used;
}

/* Dimension d's slice of the node whose receiver pieces are [rlo, rlo + e)
 * and sender box [lo, hi) (lo = hi = 0: none): the id of its content,
 * remembered, or read from the dense sums and remembered. */
static uint32_t memo_slice(gn_ctx *g, int d, int rlo, int e, int lo, int hi)
{
    gn_memo *mm = g->memo;
    uint32_t *place = memo_place(g, d, rlo, e, lo, hi);
    if (*place) return *place - 1;
    if (2 * (mm->n_slice + 1) > mm->cap_hash) memo_rehash(mm, mm->cap_hash ? 2 * mm->cap_hash : 1024);
    const int se = hi - lo, len = 2 + 4 * e + e * se, rw = g->row[d];
    const int bits_len = g->plat ? e : 0; /* gn_visit_pairs' bits after the content (gn_ctx nz) */
    double *v = memo_space(mm, len + bits_len), *va = v + 2, *vn = va + e, *vo = vn + e, *von = vo + e,
           *blk = von + e;
    v[0] = e;
    v[1] = se;
    const double *ps = g->sum[d] + (size_t)rlo * rw;
    const int *pn = g->cnt[d] + (size_t)rlo * rw;
    double ta = 0, to = 0, xa = 0, xn = 0, xo = 0, xon = 0, io = 1e300, ion = 1e300;
    for (int k = 0; k < e; k++, ps += rw, pn += rw) {
        const double a = ps[rw - 1], n = pn[rw - 1], o = se ? ps[hi] - ps[lo] : 0, on = se ? pn[hi] - pn[lo] : 0;
        va[k] = a, vn[k] = n, vo[k] = o, von[k] = on;
        ta += a, to += o;
        xa = a > xa ? a : xa, xn = n > xn ? n : xn, xo = o > xo ? o : xo, xon = on > xon ? on : xon;
        io = o < io ? o : io, ion = on < ion ? on : ion;
        for (int j = 0; j < se; j++)
            blk[k * se + j] = (double)g->mat[d][(size_t)(rlo + k) * (size_t)g->ms_r[d] +
                                                (size_t)(lo + j) * (size_t)g->ms_s[d]];
    }
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int k = 0; k < len; k++) {
        uint64_t w;
        memcpy(&w, &v[k], sizeof w);
        h = mix64(h ^ w);
    }
    uint32_t c = (uint32_t)h & (mm->cap_hash - 1), id;
    for (; mm->by_content[c]; c = (c + 1) & (mm->cap_hash - 1)) {
        const gn_slice *t = &mm->slice[mm->by_content[c] - 1];
        if (t->chash == h && slice_len(t->v) == len && !memcmp(t->v, v, sizeof(double) * (size_t)len))
            break; /* the same content: the room at the arena's end stays free */
    }
    if (mm->by_content[c]) {
        id = mm->by_content[c] - 1;
    } else {
        if (mm->n_slice == mm->cap_slice) {
            mm->cap_slice = mm->cap_slice ? 2 * mm->cap_slice : 256;
            mm->slice = lw_realloc(mm->slice, sizeof(gn_slice) * mm->cap_slice);
        }
        id = mm->n_slice++;
        mm->slice[id] = (gn_slice){.chash = h, .v = v, .agg = {ta, to, xa, xn, xo, xon, io, ion}};
        uint64_t *nz = (uint64_t *)(v + len); /* the arena's doubles, untyped until stored to */
        for (int k = 0; k < bits_len; k++) {
            uint64_t b = 0;
            for (int j = 0; j < se; j++) b |= (uint64_t)(blk[k * se + j] != 0) << j;
            nz[k] = b;
        }
        mm->used += len + bits_len;
        mm->by_content[c] = id + 1;
    }
    *place = id + 1;
    return id;
}

/* The product over dimensions of the slices' aggregate q (gn_slice agg:
 * 0 the sum of all, 1 of own; 2..5 the maxima of all, all_n, own, own_n;
 * 6, 7 the minima of own, own_n). */
static inline double agg_prod(const double ag[NDIMS][8], int q)
{
    return ag[0][q] * ag[1][q] * ag[2][q] * ag[3][q];
}

/* Fills the per-dimension values of the node whose receivers start at r0;
 * where bound is non-NULL, also returns its receivers' elements from other
 * nodes (exactly) in *far_sum and, where it is not the same problem as the
 * node before (below), a bound on its slowest receiver's time in
 * *bound.
 *
 * Each dimension's values are its slice (gn_memo: read from the sums once
 * per edge); nodes in order, a dimension whose receiver pieces and sender
 * box are those of the node before is not looked up again. Returns 1 where
 * the node is the same problem as the node before: every dimension's slice
 * of the same content (values, box extents and self overlaps) and the
 * sender with tasks on both or on neither. Then its receivers have the same
 * counts in the same order, so the same slowest time, elements and elements
 * from other nodes. */
static inline int gn_fill(gn_ctx *g, int r0, double *far_sum, double *bound)
{
    int rlo[NDIMS], rhi[NDIMS], lo[NDIMS] = {0, 0, 0, 0}, hi[NDIMS] = {0, 0, 0, 0};
    const int box_ok = r0 < g->Ts; /* the sender has tasks on this node */
    const int held = box_ok ? 2 : 1;
    box_pow2(g->rcv, r0, g->Br, rlo, rhi);
    if (box_ok) box_pow2(g->snd, r0, g->Bs, lo, hi);
    int same = g->held == held;
    for (int d = 0; d < NDIMS; d++) {
        if (g->held != held || rlo[d] != g->rlo[d] || lo[d] != g->lo[d] || hi[d] != g->hi[d]) {
            const int e = rhi[d] - rlo[d];
            const uint32_t id = memo_slice(g, d, rlo[d], e, lo[d], hi[d]);
            g->rlo[d] = rlo[d];
            g->lo[d] = lo[d];
            g->hi[d] = hi[d];
            if (id == g->id[d]) continue; /* the same content: the values and sums held already */
            same = 0;
            const gn_slice *s = &g->memo->slice[id];
            g->id[d] = id;
            g->ext[d] = e;
            g->va[d] = s->v + 2;
            g->vn[d] = g->va[d] + e;
            g->vo[d] = g->vn[d] + e;
            g->von[d] = g->vo[d] + e;
            g->nz[d] = (const uint64_t *)(g->von[d] + e + e * (hi[d] - lo[d])); /* after the content */
            memcpy(g->agg[d], s->agg, sizeof s->agg);
        }
    }
    g->held = held;
    if (bound) { /* the bound only where the node is not the one before */
        const double(*ag)[8] = g->agg;
        *far_sum = agg_prod(ag, 0) - agg_prod(ag, 1);
        if (!same)
            *bound = tx_time(&g->prb, agg_prod(ag, 5), agg_prod(ag, 4), agg_prod(ag, 3) - agg_prod(ag, 7),
                             agg_prod(ag, 2) - agg_prod(ag, 6));
        /* per-pair links: a receiver's time is a sum over its node's senders,
         * each term at most the largest link's; the relative rounding of
         * such a sum (up to 64 terms) is far below 1e-12 */
        if (!same && g->plat) *bound *= 1 + 1e-12;
    }
    return same;
}

/* Visits the receivers of the node whose box gn_fill left, in order: the
 * slowest one's time; adds their elements to *elems_io and their elements
 * from other nodes to *far_sum_io, and offers their counts to the sink (or
 * rec). self: 0 no receiver of the node has a sender task on its GPU, 1
 * every one has, 2 some (a constant in each of gn_visit's calls, so that
 * the check per receiver and the self overlap go where none is). */
static inline __attribute__((always_inline)) double gn_visit_impl(const gn_ctx *g, int r0, double *elems_io,
                                                                  double *far_sum_io, rp_sink *sink, gn_rec *rec,
                                                                  const int self)
{
    /* locals, not g->: the sink's stores could alias g for all the compiler knows */
    const int Ts = g->Ts, dir = g->dir;
    const tx_prices pr = g->pr;
    const int e0 = g->ext[0], e1 = g->ext[1], e2 = g->ext[2], e3 = g->ext[3];
    const double *va0 = g->va[0], *va1 = g->va[1], *va2 = g->va[2], *va3 = g->va[3];
    const double *vn0 = g->vn[0], *vn1 = g->vn[1], *vn2 = g->vn[2], *vn3 = g->vn[3];
    const double *vo0 = g->vo[0], *vo1 = g->vo[1], *vo2 = g->vo[2], *vo3 = g->vo[3];
    const double *von0 = g->von[0], *von1 = g->von[1], *von2 = g->von[2], *von3 = g->von[3];
    const long *mr[NDIMS]; /* the self overlap's row of each dimension's matrix at the receiver's piece */
    size_t ms_r[NDIMS], ms_s[NDIMS];
    /* receiver r's coordinates in the sender's config, while r < Ts (its
     * GPU holds a sender task: what overlaps it stays put), from shifts */
    int ssh[NDIMS], smask[NDIMS];
    task_shifts(g->snd, ssh, smask);
    for (int d = 0; d < NDIMS; d++) {
        ms_r[d] = (size_t)g->ms_r[d];
        ms_s[d] = (size_t)g->ms_s[d];
    }
    double slowest = 0, elems = 0, far_sum = 0;
    int r = r0;
    for (int i0 = 0; i0 < e0; i0++) {
        const double a0 = 1 * va0[i0], n0 = 1 * vn0[i0], o0 = 1 * vo0[i0], on0 = 1 * von0[i0];
        mr[0] = g->mat[0] + (size_t)(g->rlo[0] + i0) * ms_r[0];
        for (int i1 = 0; i1 < e1; i1++) {
            const double a1 = a0 * va1[i1], n1 = n0 * vn1[i1], o1 = o0 * vo1[i1], on1 = on0 * von1[i1];
            mr[1] = g->mat[1] + (size_t)(g->rlo[1] + i1) * ms_r[1];
            for (int i2 = 0; i2 < e2; i2++) {
                const double a2 = a1 * va2[i2], n2 = n1 * vn2[i2], o2 = o1 * vo2[i2], on2 = on1 * von2[i2];
                mr[2] = g->mat[2] + (size_t)(g->rlo[2] + i2) * ms_r[2];
                const long *mr3 = g->mat[3] + (size_t)g->rlo[3] * ms_r[3];
                for (int i3 = 0; i3 < e3; i3++, r++, mr3 += ms_r[3]) {
                    double all = a2 * va3[i3], all_n = n2 * vn3[i3], own = o2 * vo3[i3], own_n = on2 * von3[i3];
                    if (all != 0) {
                        double v = 0; /* the sender's task on the same GPU: nothing to move */
                        if (self == 1 || (self == 2 && r < Ts))
                            v = (double)mr[0][(size_t)((r >> ssh[0]) & smask[0]) * ms_s[0]] *
                                (double)mr[1][(size_t)((r >> ssh[1]) & smask[1]) * ms_s[1]] *
                                (double)mr[2][(size_t)((r >> ssh[2]) & smask[2]) * ms_s[2]] *
                                (double)mr3[(size_t)((r >> ssh[3]) & smask[3]) * ms_s[3]];
                        far_sum +=
                            receiver_done(&pr, own_n, own, all_n, all, v, sink, dir, &slowest, &elems, rec);
                    }
                }
            }
        }
    }
    *elems_io += elems;
    *far_sum_io += far_sum;
    return slowest;
}

/* gn_visit on per-pair links (pair_form_ok): gather_pairs' sums for the
 * receivers of the node gn_fill left, from its slices: a receiver's
 * overlap with each sender task on the node is the product over dimensions
 * of the slices' overlap blocks; senders in task order (row-major over the
 * sender's box), receivers too. The node's GPUs hold receiver i and sender
 * j in that order, so the node-local link of the pair is (i, j): every
 * node has node 0's (pair_form_ok), and a node's results are a function of
 * its slices as in the uniform form (the node cache holds). */
static double gn_visit_pairs(const gn_ctx *g, double *elems_io, double *far_sum_io)
{
    const int gpn = g->gpn;
    const tx_prices pr = g->pr;
    const int e0 = g->ext[0], e1 = g->ext[1], e2 = g->ext[2], e3 = g->ext[3];
    int se[NDIMS];
    const double *blk[NDIMS];
    const uint64_t *const *nz = g->nz;
    for (int d = 0; d < NDIMS; d++) {
        se[d] = g->held == 2 ? g->hi[d] - g->lo[d] : 0;
        blk[d] = g->von[d] + g->ext[d];
    }
    const double *va0 = g->va[0], *va1 = g->va[1], *va2 = g->va[2], *va3 = g->va[3];
    const double *vn0 = g->vn[0], *vn1 = g->vn[1], *vn2 = g->vn[2], *vn3 = g->vn[3];
    double slowest = 0, elems = 0, far_sum = 0;
    int li = 0; /* the receiver's GPU on the node */
    for (int i0 = 0; i0 < e0; i0++) {
        const double a0 = 1 * va0[i0], n0 = 1 * vn0[i0];
        for (int i1 = 0; i1 < e1; i1++) {
            const double a1 = a0 * va1[i1], n1 = n0 * vn1[i1];
            for (int i2 = 0; i2 < e2; i2++) {
                const double a2 = a1 * va2[i2], n2 = n1 * vn2[i2];
                for (int i3 = 0; i3 < e3; i3++, li++) {
                    const double all = a2 * va3[i3], all_n = n2 * vn3[i3];
                    if (all == 0) continue;
                    pair_acc acc = {0, 0, 0, 0};
                    const double *lat = g->plat + (size_t)li * gpn, *inv = g->pinv + (size_t)li * gpn;
                    /* the senders whose overlap is not 0 (each factor not
                     * 0), in task order: those pair_add would skip add
                     * nothing, so the sums are the same doubles */
                    for (uint64_t m0 = nz[0][i0]; m0; m0 &= m0 - 1) {
                        const int j0 = __builtin_ctzll(m0);
                        const double b0 = blk[0][i0 * se[0] + j0];
                        for (uint64_t m1 = nz[1][i1]; m1; m1 &= m1 - 1) {
                            const int j1 = __builtin_ctzll(m1), j01 = j0 * se[1] + j1;
                            const double b1 = b0 * blk[1][i1 * se[1] + j1];
                            for (uint64_t m2 = nz[2][i2]; m2; m2 &= m2 - 1) {
                                const int j2 = __builtin_ctzll(m2), j012 = j01 * se[2] + j2;
                                const double b2 = b1 * blk[2][i2 * se[2] + j2];
                                for (uint64_t m3 = nz[3][i3]; m3; m3 &= m3 - 1) {
                                    const int j3 = __builtin_ctzll(m3), j = j012 * se[3] + j3; /* its GPU */
                                    pair_add(&acc, j == li, b2 * blk[3][i3 * se[3] + j3], lat[j], inv[j],
                                             pr.elem_b);
                                }
                            }
                        }
                    }
                    far_sum += pair_done(&pr, all, all_n, &acc, &slowest, &elems);
                }
            }
        }
    }
    *elems_io += elems;
    *far_sum_io += far_sum;
    return slowest;
}

/* gn_visit_impl for the node gn_fill left, with the self case its boxes
 * give (or on per-pair links gn_visit_pairs). */
static double gn_visit(const gn_ctx *g, int r0, double *elems_io, double *far_sum_io, rp_sink *sink, gn_rec *rec)
{
    if (g->plat) return gn_visit_pairs(g, elems_io, far_sum_io); /* no sink: nothing kept on such links */
    if (r0 >= g->Ts) return gn_visit_impl(g, r0, elems_io, far_sum_io, sink, rec, 0);
    if (r0 + g->Br <= g->Ts) return gn_visit_impl(g, r0, elems_io, far_sum_io, sink, rec, 1);
    return gn_visit_impl(g, r0, elems_io, far_sum_io, sink, rec, 2);
}

/* The place of the node gn_fill left in a cache of `places` (a power of
 * two), from its four slice ids and held (its tag). */
static inline size_t gn_place(const gn_ctx *g, size_t places)
{
    /* the ids are small integers: one odd multiplier each (the products
     * independent of each other), then one multiply spreads the sum's low
     * bits to the high bits kept */
    uint64_t h = (uint64_t)g->id[0] * 0x9e3779b97f4a7c15ULL + (uint64_t)g->id[1] * 0xc2b2ae3d27d4eb4fULL +
                 (uint64_t)g->id[2] * 0x165667b19e3779f9ULL + (uint64_t)g->id[3] * 0xd6e8feb86659fd93ULL +
                 (uint64_t)g->held;
    h ^= h >> 32;
    h *= 0xbf58476d1ce4e5b9ULL;
    return (size_t)(h >> 40) & (places - 1);
}

/* A cached node's tag: the memo's generation and held (1 or 2), never 0. */
static inline uint32_t gn_tag(const gn_ctx *g)
{
    return g->memo->gen << 2 | (uint32_t)g->held;
}

/* Whether a cached node (its ids and tag) is the node gn_fill left. */
static inline int gn_is(const uint32_t id[NDIMS], uint32_t tag, const gn_ctx *g)
{
    return tag == gn_tag(g) && id[0] == g->id[0] && id[1] == g->id[1] && id[2] == g->id[2] &&
           id[3] == g->id[3];
}

/* gn_visit of a node where no sink wants its receivers' counts, through
 * the edge's cache of nodes (gn_memo): adds the same elements and elements
 * from other nodes, returns the same slowest time. */
static double gn_visit_memo(const gn_ctx *g, int r0, double *elems_io, double *far_sum_io)
{
    gn_memo *mm = g->memo;
    if (!mm->node) mm->node = lw_calloc(GN_NODES, sizeof *mm->node);
    gn_node *n = &mm->node[gn_place(g, GN_NODES)];
    if (gn_is(n->id, n->tag, g)) {
        *elems_io += n->elems;
        *far_sum_io += n->far;
        return n->slowest;
    }
    double elems = 0, far = 0, t = gn_visit(g, r0, &elems, &far, NULL, NULL);
    *n = (gn_node){{g->id[0], g->id[1], g->id[2], g->id[3]}, gn_tag(g), t, elems, far};
    *elems_io += elems;
    *far_sum_io += far;
    return t;
}

/* The counts of cand[0..n) that the sink would keep of them alone, in
 * place and in the order it would hold them (rp_keep without its limit):
 * those no other dominates, the first of equal ones. Returns how many. */
static int cand_front(rp_cand *c, int n)
{
    if (n == 0) return 0;
    /* mostly one count dominates the others: it equals their maxima, and
     * is all the front (the first such) */
    rp_cand mx = c[0];
    for (int q = 1; q < n; q++) {
        mx.own_n = c[q].own_n > mx.own_n ? c[q].own_n : mx.own_n;
        mx.own = c[q].own > mx.own ? c[q].own : mx.own;
        mx.far_n = c[q].far_n > mx.far_n ? c[q].far_n : mx.far_n;
        mx.far = c[q].far > mx.far ? c[q].far : mx.far;
    }
    int top = -1;
    for (int q = n - 1; q >= 0; q--) {
        int eq = (c[q].own_n == mx.own_n) & (c[q].own == mx.own) & (c[q].far_n == mx.far_n) & (c[q].far == mx.far);
        top = eq ? q : top;
    }
    if (top >= 0) {
        c[0] = c[top];
        return 1;
    }
    int k = 0, over = 0; /* the kept ones in c[0..k), k <= q: c[q] not yet overwritten */
    for (int q = 0; q < n; q++) k = cand_keep(c, k, c[q], n + 1, &over);
    return k;
}

/* gn_visit of a node whose receivers' counts sink wants, through the
 * edge's cache of such nodes: offers the sink the node's own front of
 * counts (cand_front of its receivers' counts), first seen or cached.
 * The sink ends each node as it would after every receiver's offer: what
 * it holds is always the front of all it was offered (a count dominated
 * within the node is dominated by one of the node's front, which the sink
 * then keeps or dominates), in the order of first offers. (Past RP_MAXC
 * the sink gives up on the entry, which is then computed again when
 * priced: a node's front can at most change when that happens, not what
 * an entry costs.) */
static double gn_visit_sink_memo(const gn_ctx *g, int r0, double *elems_io, double *far_sum_io, rp_sink *sink)
{
    gn_memo *mm = g->memo;
    if (!mm->snode) mm->snode = lw_calloc(GN_SNODES, sizeof *mm->snode);
    gn_snode *n = &mm->snode[gn_place(g, GN_SNODES)];
    if (gn_is(n->id, n->tag, g)) {
        for (int k = 0; k < n->n; k++)
            rp_keep(sink, g->dir, n->offer[k].own_n, n->offer[k].own, n->offer[k].far_n, n->offer[k].far);
        *elems_io += n->elems;
        *far_sum_io += n->far;
        return n->slowest;
    }
    gn_rec rec;
    rec.n = 0;
    double elems = 0, far = 0, t = gn_visit(g, r0, &elems, &far, NULL, &rec);
    *elems_io += elems;
    *far_sum_io += far;
    const int kept = cand_front(rec.c, rec.n);
    for (int k = 0; k < kept; k++) rp_keep(sink, g->dir, rec.c[k].own_n, rec.c[k].own, rec.c[k].far_n, rec.c[k].far);
    if (kept > GN_OFFERS) { /* too many to keep: this node is visited again next time */
        n->tag = 0;
        return t;
    }
    memcpy(n->offer, rec.c, sizeof(rp_cand) * (size_t)kept);
    memcpy(n->id, g->id, sizeof n->id);
    n->tag = gn_tag(g);
    n->n = kept;
    n->slowest = t;
    n->elems = elems;
    n->far = far;
    return t;
}

/* What gather_small needs of one direction. */
typedef struct small_ctx {
    const double *sum[NDIMS];
    const int *cnt[NDIMS];
    const long *mat[NDIMS];
    int row[NDIMS], ms_r[NDIMS], ms_s[NDIMS], rsh[NDIMS], rmask[NDIMS], ssh[NDIMS], smask[NDIMS];
    int lo[NDIMS], hi[NDIMS]; /* the sender's box on the receivers' node */
    tx_prices pr;
    rp_sink *sink;
    int dir;
    double slowest, elems;
} small_ctx;

/* Receivers [ra, rb) of one node; own: the sender has tasks on the node;
 * self: each has the sender's task of its index on its GPU (rb <= Ts).
 * Returns their elements from other nodes. */
static inline __attribute__((always_inline)) double small_run(small_ctx *c, int ra, int rb, const int own_on,
                                                              const int self_on)
{
    double node_far = 0;
    for (int r = ra; r < rb; r++) {
        const size_t i0 = (size_t)((r >> c->rsh[0]) & c->rmask[0]), i1 = (size_t)((r >> c->rsh[1]) & c->rmask[1]),
                     i2 = (size_t)((r >> c->rsh[2]) & c->rmask[2]), i3 = (size_t)((r >> c->rsh[3]) & c->rmask[3]);
        const double *s0 = c->sum[0] + i0 * c->row[0], *s1 = c->sum[1] + i1 * c->row[1],
                     *s2 = c->sum[2] + i2 * c->row[2], *s3 = c->sum[3] + i3 * c->row[3];
        double all = s0[c->row[0] - 1] * s1[c->row[1] - 1] * s2[c->row[2] - 1] * s3[c->row[3] - 1];
        if (all == 0) continue;
        const int *n0 = c->cnt[0] + i0 * c->row[0], *n1 = c->cnt[1] + i1 * c->row[1],
                  *n2 = c->cnt[2] + i2 * c->row[2], *n3 = c->cnt[3] + i3 * c->row[3];
        double all_n = (double)n0[c->row[0] - 1] * n1[c->row[1] - 1] * n2[c->row[2] - 1] * n3[c->row[3] - 1];
        double own = 0, own_n = 0, v = 0;
        if (own_on) {
            own = (s0[c->hi[0]] - s0[c->lo[0]]) * (s1[c->hi[1]] - s1[c->lo[1]]) * (s2[c->hi[2]] - s2[c->lo[2]]) *
                  (s3[c->hi[3]] - s3[c->lo[3]]);
            own_n = (double)(n0[c->hi[0]] - n0[c->lo[0]]) * (n1[c->hi[1]] - n1[c->lo[1]]) *
                    (n2[c->hi[2]] - n2[c->lo[2]]) * (n3[c->hi[3]] - n3[c->lo[3]]);
        }
        if (self_on) /* the sender's task on the same GPU: nothing to move */
            v = (double)c->mat[0][i0 * c->ms_r[0] + (size_t)((r >> c->ssh[0]) & c->smask[0]) * c->ms_s[0]] *
                (double)c->mat[1][i1 * c->ms_r[1] + (size_t)((r >> c->ssh[1]) & c->smask[1]) * c->ms_s[1]] *
                (double)c->mat[2][i2 * c->ms_r[2] + (size_t)((r >> c->ssh[2]) & c->smask[2]) * c->ms_s[2]] *
                (double)c->mat[3][i3 * c->ms_r[3] + (size_t)((r >> c->ssh[3]) & c->smask[3]) * c->ms_s[3]];
        node_far += receiver_done(&c->pr, own_n, own, all_n, all, v, c->sink, c->dir, &c->slowest, &c->elems, NULL);
    }
    return node_far;
}

/* gather_dense where every degree and the GPUs per node are powers of two
 * (table builds): the same receivers in the same order, the same products
 * in the same order, so the same doubles and the same counts offered to the
 * sink in the same order, with fewer branches that depend on the data (most
 * of gather_dense's time goes to mispredicted ones: the coordinate
 * odometers, the node change, the self overlap). A receiver's coordinates
 * come from shifts and masks; a node's receivers with the sender's task of
 * their index on their GPU, those without, and the nodes without sender
 * tasks each go through a loop of their own; the self overlap's removal is
 * arithmetic (subtracting a zero overlap changes nothing); a node's
 * elements to other nodes are summed before they reach its NIC totals
 * (integers below 2^53: exact in any order). */
static double gather_small(const cost_model_priv *pm, const dim_list *const dl[NDIMS], const config *rcv,
                           const config *snd, int forward, double *nic_in, double *nic_out_rev, double *elems_out,
                           rp_sink *sink)
{
    const cluster *cl = pm->pub.cl;
    const int gpn = cl->gpus_per_node;
    const int Tr = config_tasks(rcv), Ts = config_tasks(snd);
    const int Bs = Ts < gpn ? Ts : gpn;
    const int multi_node = pm->nodes_used > 1;
    small_ctx c;
    c.pr = tx_prices_of(cl, pm->pub.elem_bytes);
    c.sink = sink;
    c.dir = forward ? 0 : 1;
    c.slowest = c.elems = 0;
    dir_tables(dl, rcv, snd, forward, c.sum, c.cnt, c.mat, c.row, c.ms_r, c.ms_s);
    task_shifts(rcv, c.rsh, c.rmask);
    task_shifts(snd, c.ssh, c.smask);
    for (int r0 = 0; r0 < Tr; r0 += gpn) {
        const int r1 = r0 + gpn < Tr ? r0 + gpn : Tr;
        double node_far;
        if (r0 < Ts) {
            const int rs = r1 < Ts ? r1 : Ts;
            box_pow2(snd, r0, Bs, c.lo, c.hi);
            node_far = small_run(&c, r0, rs, 1, 1);
            if (rs < r1) node_far += small_run(&c, rs, r1, 1, 0);
        } else {
            node_far = small_run(&c, r0, r1, 0, 0);
        }
        if (multi_node && node_far > 0) {
            nic_in[r0 / gpn] += node_far * c.pr.elem_b;
            nic_out_rev[r0 / gpn] += node_far * c.pr.elem_b;
        }
    }
    *elems_out = c.elems;
    return c.slowest;
}

/* gather_nodes' context for one direction of one entry (rcv, of Tr tasks,
 * gathers from snd), no slice held yet. */
static void gn_ctx_init(gn_ctx *g, const cost_model_priv *pm, gn_memo *memo, const dim_list *const dl[NDIMS],
                        const config *rcv, int Tr, const config *snd, int forward)
{
    const cluster *cl = pm->pub.cl;
    const int gpn = cl->gpus_per_node;
    g->rcv = rcv;
    g->snd = snd;
    g->Tr = Tr;
    g->Ts = config_tasks(snd);
    g->Br = g->Tr < gpn ? g->Tr : gpn;
    g->Bs = g->Ts < gpn ? g->Ts : gpn;
    g->dir = forward ? 0 : 1;
    g->pr = g->prb = tx_prices_of(cl, pm->pub.elem_bytes);
    g->plat = g->pinv = NULL;
    g->gpn = gpn;
    if (pm->pair_form_ok) {
        g->plat = pm->pair_lat;
        g->pinv = pm->pair_inv;
        g->prb.lat_in = pm->pair_lat_max;
        g->prb.inv_in = pm->pair_inv_max;
    }
    g->memo = memo;
    dir_tables(dl, rcv, snd, forward, g->sum, g->cnt, g->mat, g->row, g->ms_r, g->ms_s);
    for (int d = 0; d < NDIMS; d++) g->id[d] = UINT32_MAX; /* no slice yet */
    g->held = 0;
}

/* Whether every tail node (from r0 = Ts on: no sender task there) is the
 * same problem as the first. Nothing stays on them, and each receiver's
 * counts are products of what its pieces need: where every dimension the
 * nodes' boxes move along needs as much for every piece, every tail node's
 * receivers in order have the same counts. */
static int gn_tail_same(const gn_ctx *g, const dim_list *const dl[NDIMS], int forward)
{
    if (g->Ts >= g->Tr) return 0;
    int rl[NDIMS], rh[NDIMS];
    box_pow2(g->rcv, 0, g->Br, rl, rh);
    for (int d = 0; d < NDIMS; d++)
        if (rh[d] - rl[d] < g->rcv->deg[d] && !(forward ? dl[d]->uni_f : dl[d]->uni_b)) return 0;
    return 1;
}

/* gather_dense node by node, for table builds. The receivers on one
 * cluster node form a box of piece indices (node_box), so each dimension's
 * running sums are read once per piece of the box, the products over
 * dimensions are hoisted out of the inner loops, and coordinates come from
 * shifts. Visiting a node's receivers in order gives the same sums
 * (integers, so exactly), the same times, and the same candidates offered to
 * the sink in the same order as gather_dense.
 *
 * Without a sink and where the exact element count is not wanted, many nodes
 * are not visited at all (branch and bound): a node's bytes to other nodes are
 * separable (the sum over its box of all - own is the product over dimensions
 * of the box's sums of all, minus the same for own; the self overlap cancels
 * in all - own), so they come in O(dimensions x box) per node; and each
 * node's slowest receiver is bounded above by the time of the per-dimension
 * maxima of own_n, own and all_n, all less the minima of own_n, own (the time
 * grows with each count, and so does its rounding). A node whose bound is
 * at most the slowest time found so far (nodes in order) is left out: none
 * of its receivers can be slower. Then *elems_out is only right in sign (any
 * element moves or none: a node is left out only once a receiver's time is
 * positive, which some moved element makes it). All sums are of integers
 * below 2^53 (tensor elements), exact in any order. */
double gather_nodes(const cost_model_priv *pm, gn_memo *memo, const dim_list *const dl[NDIMS], const config *rcv,
                    const config *snd, int forward, double *nic_in, double *nic_out_rev, double *elems_out,
                    rp_sink *sink, int exact_elems)
{
    const int gpn = pm->pub.cl->gpus_per_node, Tr = config_tasks(rcv);
    const int pow2 = pow2_degrees(rcv) && pow2_degrees(snd) && (gpn & (gpn - 1)) == 0;
    /* with fewer than 8 receivers a node, receiver by receiver is as fast */
    if (!pow2 || gpn < 8 || gpn > GN_BOX || Tr < 8) {
        if (pm->pair_form_ok) return gather_pairs(pm, dl, rcv, snd, forward, nic_in, nic_out_rev, elems_out, 1);
        return pow2 && (gpn <= 8 || Tr <= 8)
                   ? gather_small(pm, dl, rcv, snd, forward, nic_in, nic_out_rev, elems_out, sink)
                   : gather_dense(pm, dl, rcv, snd, forward, nic_in, nic_out_rev, elems_out, sink);
    }
    gn_ctx g;
    gn_ctx_init(&g, pm, memo, dl, rcv, Tr, snd, forward);
    const int multi_node = pm->nodes_used > 1;
    /* nodes may be left out where the time grows with each count (prices
     * not negative), the element count is not wanted exactly, and no sink
     * wants every receiver's counts (and the exact count) */
    const int bound = !exact_elems && !sink && g.prb.lat_in >= 0 && g.pr.lat_x >= 0 && g.prb.inv_in >= 0 &&
                      g.pr.inv_x >= 0 && g.pr.elem_b >= 0;
    const int tail_same = gn_tail_same(&g, dl, forward);
    const int tail0 = (g.Ts + g.Br - 1) / g.Br * g.Br; /* the first tail node */
    double slowest = 0, elems = 0, node_elems = 0, node_far = 0, tail_far = 0;
    int tail_filled = 0; /* a tail node was filled: tail_far (and node_elems) are its */
    /* With the bound, the last node first: the tail's receivers get
     * everything from other nodes and are mostly the slowest, so more of
     * the other nodes fall under the bound (Inception-v3 at 64 GPUs: 20%
     * fewer nodes visited). The slowest time is a maximum over every node
     * and each node's elements from other nodes go to its own NIC totals,
     * in any order. With a sink, nodes in order: it keeps counts in the
     * order they are first offered. */
    const int n_nodes = g.Tr / g.Br;
    for (int k = 0; k < n_nodes; k++) {
        const int r0 = (bound ? n_nodes - 1 - k : k) * g.Br;
        double far_sum = 0, ub_t = 0;
        if (tail_same && r0 >= tail0 && tail_filled) { /* as the first tail node filled, which gn_fill would find */
            far_sum = tail_far;
            if (!bound) elems += node_elems;
        } else if (bound) {
            int same = gn_fill(&g, r0, &far_sum, &ub_t);
            /* no receiver here is slower than one already seen (the same
             * problem as the node before was seen, or bounded, already) */
            if (!same && !(slowest > 0 && ub_t <= slowest)) {
                double unused = 0;
                double t = gn_visit_memo(&g, r0, &elems, &unused);
                if (t > slowest) slowest = t;
            }
        } else {
            /* the same problem as the node before: the same counts, which
             * the sink holds already */
            if (!gn_fill(&g, r0, NULL, NULL)) {
                node_elems = node_far = 0;
                double t = sink ? gn_visit_sink_memo(&g, r0, &node_elems, &node_far, sink)
                                : gn_visit_memo(&g, r0, &node_elems, &node_far);
                if (t > slowest) slowest = t;
            }
            elems += node_elems;
            far_sum = node_far;
        }
        if (r0 >= tail0 && !tail_filled) {
            tail_far = far_sum;
            tail_filled = 1;
        }
        if (multi_node && far_sum > 0) {
            nic_in[r0 / gpn] += far_sum * g.pr.elem_b;
            nic_out_rev[r0 / gpn] += far_sum * g.pr.elem_b;
        }
    }
    *elems_out = elems;
    return slowest;
}
