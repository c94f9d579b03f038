/**
 * The server's relevance floor, applied to the hits a person is shown: a hit with hardly any similarity and
 * no real keyword match is noise (all-MiniLM-L6-v2 gives unrelated texts a cosine of about -0.1 to 0.15).
 * The thresholds are generated from server/botbin/search/pipeline.py into @botbin/protocol.
 */
import { type Hit, RELEVANCE_MIN_BM25_SHARE, RELEVANCE_MIN_COSINE } from "@botbin/protocol";

/**
 * True unless the hit is under the floor (keyword-only results, `degraded`, have no cosine to judge by). The
 * keyword arm reads `bm25Share`, the raw BM25 score as a share of the most the query could score: `bm25` is
 * 1 for a best chunk that holds enough of the query's known words, however few they are.
 */
export function relevant(hit: Pick<Hit, "cosine" | "bm25Share">, degraded = false): boolean {
  return degraded || hit.cosine >= RELEVANCE_MIN_COSINE || hit.bm25Share >= RELEVANCE_MIN_BM25_SHARE;
}
