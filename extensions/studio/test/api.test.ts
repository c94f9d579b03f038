import { strict as assert } from "node:assert";
import { test } from "node:test";
import { Api, ApiError, folderPath, tokenOf } from "../src/api";

function recorder(status: number, body: string): { calls: [string, RequestInit][]; fetcher: typeof fetch } {
  const calls: [string, RequestInit][] = [];
  const fetcher = (async (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push([String(input), init ?? {}]);
    return new Response(body, { status });
  }) as typeof fetch;
  return { calls, fetcher };
}

test("the page's token comes from its URL", () => {
  assert.equal(tokenOf("?token=abc-_1"), "abc-_1");
  assert.equal(tokenOf(""), "");
});

test("every request carries the token in a header, a POST its body as JSON, and no cookie", async () => {
  const { calls, fetcher } = recorder(200, '{"hits": []}');
  const api = new Api("s3cret", fetcher);
  assert.deepEqual(await api.post(folderPath(0, "search"), { query: "x" }), { hits: [] });
  await api.get("/api/info");
  const [[path, init], [, get]] = calls as [[string, RequestInit], [string, RequestInit]];
  assert.equal(path, "/api/folders/0/search");
  assert.equal(init.method, "POST");
  assert.equal(init.body, '{"query":"x"}');
  assert.deepEqual(init.headers, { "Content-Type": "application/json", "X-Botbin-Token": "s3cret" });
  assert.equal(init.credentials, "omit");
  assert.deepEqual(get.headers, { "X-Botbin-Token": "s3cret" });
});

test("a refusal becomes an ApiError with the server's kind and message", async () => {
  const { fetcher } = recorder(400, '{"kind": "bad_request", "message": "the query is empty"}');
  await assert.rejects(new Api("t", fetcher).post("/api/folders/0/search", {}), (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.status, 400);
    assert.equal(err.kind, "bad_request");
    assert.equal(err.message, "the query is empty");
    return true;
  });
  const plain = recorder(401, "a valid studio token is needed\n");
  await assert.rejects(new Api("t", plain.fetcher).get("/api/info"), /a valid studio token is needed/);
});
