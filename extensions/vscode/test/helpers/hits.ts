// The shared payload factories of @botbin/client (kept at this path for the extension's tests).
export { hit, searchResult, statusResult } from "@botbin/client/testing/payloads";
