/**
 * An encrypted store (`encryption = true` in botbin.toml, or `botbin encrypt`) opens only with its
 * passphrase. The server says so with an error kind (docs/protocol.md, "Error kinds"): `locked` (no passphrase)
 * or `wrong_passphrase`, in a `botbin/error` notification and in each folder's `lastErrorKind` of
 * `botbin/status`. These helpers switch on that kind (never on the message's words) and offer the user, once
 * per try, to enter the passphrase.
 */
import type { ErrorKind, ErrorReport, ServerOptions, ServerSettings, StatusResult } from "@botbin/protocol";

/** An error a passphrase fixes: its kind, and the server's reason in words (to show, never to parse). */
export interface LockedError {
  kind: "locked" | "wrong_passphrase";
  message: string;
}

/** True when `kind` says the store is encrypted and no passphrase, or a wrong one, was given. */
export function needsPassphrase(kind: ErrorKind | null | undefined): kind is LockedError["kind"] {
  return kind === "locked" || kind === "wrong_passphrase";
}

/** True when `kind` says the passphrase given is wrong (rather than missing). */
export function wrongPassphrase(kind: ErrorKind | null | undefined): boolean {
  return kind === "wrong_passphrase";
}

/** The error of a `botbin/error` notification when a passphrase would fix it. */
export function lockedError(report: Pick<ErrorReport, "kind" | "message">): LockedError | undefined {
  return needsPassphrase(report.kind) ? { kind: report.kind, message: report.message } : undefined;
}

/** The first folder error of a status answer that a passphrase would fix, if any. */
export function lockedReason(status: StatusResult): LockedError | undefined {
  for (const folder of status.folders) {
    if (needsPassphrase(folder.lastErrorKind)) return { kind: folder.lastErrorKind, message: folder.lastError ?? "" };
  }
  return undefined;
}

/** The server options: the settings, plus the passphrase when there is one (never an empty key). */
export function withPassphrase(settings: ServerSettings, passphrase: string | undefined): ServerOptions {
  return passphrase ? { ...settings, passphrase } : { ...settings };
}

/**
 * Offers "Enter passphrase" at most once per try: the server repeats its error (each sync, each status), and
 * one prompt is enough. A new try begins when a passphrase is given or forgotten, or the server restarts;
 * answers to questions asked before that (`attempt` below) no longer prompt.
 */
export class PassphraseOffer {
  private tries = 0;
  private offered = false;

  constructor(private readonly offer: (error: LockedError) => void) {}

  /** The current try; hand it back to `check` with an answer that was asked for under it. */
  get attempt(): number {
    return this.tries;
  }

  /** Offers when `error` needs a passphrase and nothing was offered in this try; true when it needs one. */
  check(error: LockedError | undefined, attempt = this.tries): boolean {
    if (!error) return false;
    if (attempt === this.tries && !this.offered) {
      this.offered = true;
      this.offer(error);
    }
    return true;
  }

  /** A new try: the next error offers again. */
  reset(): void {
    this.tries++;
    this.offered = false;
  }
}

/**
 * Which `window/showMessage` texts a `botbin/error` already covered: the front end acted on the kind (offered
 * the passphrase), so it leaves out the message that names the same failure, known by its exact `shownAs`.
 */
export class CoveredMessages {
  private readonly covered = new Set<string>();

  /** A `botbin/error` the front end acted on: the message `shownAs` that follows is left out. */
  cover(report: Pick<ErrorReport, "shownAs">): void {
    this.covered.add(report.shownAs);
  }

  /** True (once) when `message` is the text of a covered error. */
  take(message: string): boolean {
    return this.covered.delete(message);
  }
}
