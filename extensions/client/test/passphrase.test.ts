import { strict as assert } from "node:assert";
import { test } from "node:test";
import { lockedReason, needsPassphrase, PassphraseOffer, withPassphrase, wrongPassphrase } from "../src/passphrase";
import { statusProblems } from "../src/status";
import { statusResult } from "../testing/payloads";

// the server's own words (server/botbin/sync/encryption.py), as a sync error names them
const MARKER = "/ws/memory/aifbin/encryption.json";
const MISSING = `${MARKER}: this store is encrypted; give its passphrase in BOTBIN_PASSPHRASE, at the terminal prompt, or in the editor's botbin passphrase setting`;
const NEW_STORE = `${MARKER}: encryption is on for this store; give its passphrase in BOTBIN_PASSPHRASE, at the terminal prompt, or in the editor's botbin passphrase setting`;
const WRONG = `${MARKER}: wrong passphrase for this encrypted store; nothing was read or changed`;
const DAMAGED = `${MARKER}: encryption marker is unreadable or damaged (JSONDecodeError: x); restore it from a backup`;

test("the server's passphrase errors are told apart from the rest", () => {
  for (const message of [MISSING, NEW_STORE, WRONG, `botbin: ${MISSING}`]) assert.ok(needsPassphrase(message), message);
  for (const message of [DAMAGED, "botbin: the embedding model is unavailable", "", null, undefined]) {
    assert.equal(needsPassphrase(message), false, String(message));
  }
  assert.equal(wrongPassphrase(WRONG), true);
  assert.equal(wrongPassphrase(MISSING), false);
});

test("a locked folder in status: its reason, and a problem that names the command to run", () => {
  const locked = statusResult();
  locked.folders[0]!.lastError = MISSING;
  assert.equal(lockedReason(locked), MISSING);
  assert.equal(lockedReason(statusResult()), undefined);
  assert.deepEqual(statusProblems(locked, "Sync", "Unlock"), [
    'the memory is encrypted and it needs its passphrase: run "Unlock"',
  ]);
  locked.folders[0]!.lastError = WRONG;
  assert.deepEqual(statusProblems(locked, "Sync", "Unlock"), [
    'the memory is encrypted and the passphrase is wrong: run "Unlock"',
  ]);
  locked.folders[0]!.lastError = DAMAGED;
  assert.deepEqual(statusProblems(locked), [`sync failed: ${DAMAGED}`]);
});

test("the passphrase joins the settings only when there is one", () => {
  assert.deepEqual(withPassphrase({ top_k: 3 }, "s3cret"), { top_k: 3, passphrase: "s3cret" });
  assert.deepEqual(withPassphrase({ top_k: 3 }, undefined), { top_k: 3 });
  assert.deepEqual(withPassphrase({}, ""), {});
});

test("Enter passphrase is offered once per try; answers asked for under an older try do not offer", () => {
  const offered: string[] = [];
  const offer = new PassphraseOffer((reason) => offered.push(reason));
  assert.equal(offer.check("botbin: sync failed: disk full"), false);
  assert.equal(offer.check(MISSING), true);
  assert.equal(offer.check(MISSING), true);
  assert.deepEqual(offered, [MISSING]);
  const asked = offer.attempt;
  offer.reset(); // the user gave a passphrase
  assert.equal(offer.check(MISSING, asked), true, "still a passphrase error");
  assert.equal(offered.length, 1, "but from before the new passphrase: no prompt");
  offer.check(WRONG);
  assert.deepEqual(offered, [MISSING, WRONG]);
});
