import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  CoveredMessages,
  lockedError,
  lockedReason,
  needsPassphrase,
  PassphraseOffer,
  withPassphrase,
  wrongPassphrase,
} from "../src/passphrase";
import { statusProblems } from "../src/status";
import { statusResult } from "../testing/payloads";

// the server's own words (server/botbin/sync/encryption.py): shown, never parsed; the kind decides
const MARKER = "/ws/memory/aifbin/encryption.json";
const MISSING = `${MARKER}: this store is encrypted; give its passphrase in BOTBIN_PASSPHRASE, at the terminal prompt, or in the editor's botbin passphrase setting`;
const WRONG = `${MARKER}: wrong passphrase for this encrypted store; nothing was read or changed`;
const DAMAGED = `${MARKER}: encryption marker is unreadable or damaged (JSONDecodeError: x); restore it from a backup`;

test("the passphrase errors are told apart by their kind, never by their words", () => {
  for (const kind of ["locked", "wrong_passphrase"] as const) assert.ok(needsPassphrase(kind), kind);
  for (const kind of ["bad_file", "model_unavailable", "busy", "error", null, undefined] as const) {
    assert.equal(needsPassphrase(kind), false, String(kind));
  }
  assert.equal(wrongPassphrase("wrong_passphrase"), true);
  assert.equal(wrongPassphrase("locked"), false);
  // words that once matched a regex do not count without the kind
  assert.equal(lockedError({ kind: "error", message: MISSING }), undefined);
  assert.deepEqual(lockedError({ kind: "locked", message: "anything" }), { kind: "locked", message: "anything" });
});

test("a locked folder in status: its reason, and a problem that names the command to run", () => {
  const locked = statusResult();
  locked.folders[0]!.lastError = MISSING;
  locked.folders[0]!.lastErrorKind = "locked";
  assert.deepEqual(lockedReason(locked), { kind: "locked", message: MISSING });
  assert.equal(lockedReason(statusResult()), undefined);
  assert.deepEqual(statusProblems(locked, "Sync", "Unlock"), [
    'the memory is encrypted and it needs its passphrase: run "Unlock"',
  ]);
  locked.folders[0]!.lastError = WRONG;
  locked.folders[0]!.lastErrorKind = "wrong_passphrase";
  assert.deepEqual(statusProblems(locked, "Sync", "Unlock"), [
    'the memory is encrypted and the passphrase is wrong: run "Unlock"',
  ]);
  locked.folders[0]!.lastError = DAMAGED;
  locked.folders[0]!.lastErrorKind = "bad_file";
  assert.deepEqual(statusProblems(locked), [`sync failed: ${DAMAGED}`]);
});

test("the passphrase joins the settings only when there is one", () => {
  assert.deepEqual(withPassphrase({ top_k: 3 }, "s3cret"), { top_k: 3, passphrase: "s3cret" });
  assert.deepEqual(withPassphrase({ top_k: 3 }, undefined), { top_k: 3 });
  assert.deepEqual(withPassphrase({}, ""), {});
});

test("Enter passphrase is offered once per try; answers asked for under an older try do not offer", () => {
  const offered: string[] = [];
  const offer = new PassphraseOffer((error) => offered.push(error.kind));
  assert.equal(offer.check(lockedError({ kind: "busy", message: "held" })), false);
  assert.equal(offer.check({ kind: "locked", message: MISSING }), true);
  assert.equal(offer.check({ kind: "locked", message: MISSING }), true);
  assert.deepEqual(offered, ["locked"]);
  const asked = offer.attempt;
  offer.reset(); // the user gave a passphrase
  assert.equal(offer.check({ kind: "locked", message: MISSING }, asked), true, "still a passphrase error");
  assert.equal(offered.length, 1, "but from before the new passphrase: no prompt");
  offer.check({ kind: "wrong_passphrase", message: WRONG });
  assert.deepEqual(offered, ["locked", "wrong_passphrase"]);
});

test("a message a botbin/error covered is left out once, by its exact text", () => {
  const covered = new CoveredMessages();
  covered.cover({ shownAs: `botbin: ${MISSING}` });
  assert.equal(covered.take("botbin: something else"), false);
  assert.equal(covered.take(`botbin: ${MISSING}`), true);
  assert.equal(covered.take(`botbin: ${MISSING}`), false, "once");
});
