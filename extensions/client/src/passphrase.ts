/**
 * An encrypted store (`encryption = true` in botbin.toml, or `botbin encrypt`) opens only with its
 * passphrase. The server says so in a sync error (a `window/showMessage`, and `lastError` in status); these
 * helpers recognise that error and offer the user, once per try, to enter the passphrase.
 */
import type { ServerOptions, ServerSettings, StatusResult } from "@botbin/protocol";

/** Words of the server's errors that a passphrase fixes (server/botbin/sync/encryption.py). */
const NEEDS_PASSPHRASE = /this store is encrypted|encrypted store|encryption is on for this store/i;
const WRONG_PASSPHRASE = /wrong passphrase/i;

/** True when `message` says the store is encrypted and no passphrase, or a wrong one, was given. */
export function needsPassphrase(message: string | null | undefined): boolean {
  return !!message && NEEDS_PASSPHRASE.test(message);
}

/** True when `message` says the passphrase given is wrong (rather than missing). */
export function wrongPassphrase(message: string | null | undefined): boolean {
  return needsPassphrase(message) && WRONG_PASSPHRASE.test(message ?? "");
}

/** The first folder error of a status answer that a passphrase would fix, if any. */
export function lockedReason(status: StatusResult): string | undefined {
  return status.folders.map((f) => f.lastError).find(needsPassphrase) ?? undefined;
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

  constructor(private readonly offer: (reason: string) => void) {}

  /** The current try; hand it back to `check` with an answer that was asked for under it. */
  get attempt(): number {
    return this.tries;
  }

  /** Offers when `message` needs a passphrase and nothing was offered in this try; true when it needs one. */
  check(message: string | null | undefined, attempt = this.tries): boolean {
    if (!needsPassphrase(message)) return false;
    if (attempt === this.tries && !this.offered) {
      this.offered = true;
      this.offer(message as string);
    }
    return true;
  }

  /** A new try: the next error offers again. */
  reset(): void {
    this.tries++;
    this.offered = false;
  }
}
