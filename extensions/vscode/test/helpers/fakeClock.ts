// The shared fake clock of @botbin/client (kept at this path for the extension's tests).
export { FakeClock, settle } from "@botbin/client/testing/fakeClock";
