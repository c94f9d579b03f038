// Loaded into every Node process of a host under test (NODE_OPTIONS=--import=<this file>): a TCP connection, a
// DNS lookup or a UDP send to anything but 127.0.0.1 / ::1 / localhost is refused and written, one JSON line, to
// $BOTBIN_NETGUARD_LOG, so a test can assert that nothing left the machine. Unix sockets pass.
import dgram from "node:dgram";
import dns from "node:dns";
import { appendFileSync } from "node:fs";
import net from "node:net";

const LOG = process.env.BOTBIN_NETGUARD_LOG;
const LOCAL = new Set(["127.0.0.1", "::1", "localhost", "::ffff:127.0.0.1"]);

function record(kind, target) {
  const stack = (new Error().stack ?? "").split("\n").slice(3, 40).join("\n");
  if (LOG) appendFileSync(LOG, JSON.stringify({ kind, target, pid: process.pid, argv: process.argv.slice(1, 3), stack }) + "\n");
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  // net.connect() hands over its normalized arguments: [options, callback]
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  let host;
  let port;
  if (first !== null && typeof first === "object") {
    if (first.path !== undefined) return connect.apply(this, args);
    host = first.host ?? "localhost";
    port = first.port;
  } else if (typeof first === "string" && !/^\d+$/.test(first)) {
    return connect.apply(this, args); // a Unix socket path
  } else {
    port = first;
    host = typeof args[1] === "string" ? args[1] : "localhost";
  }
  if (LOCAL.has(String(host))) return connect.apply(this, args);
  record("tcp", `${host}:${port}`);
  const err = Object.assign(new Error(`netguard: connection to ${host}:${port} refused (tests reach 127.0.0.1 only)`), {
    code: "ECONNREFUSED",
  });
  process.nextTick(() => this.destroy(err));
  return this;
};

function notFound(hostname) {
  return Object.assign(new Error(`netguard: lookup of ${hostname} refused (tests reach 127.0.0.1 only)`), {
    code: "ENOTFOUND",
    hostname,
  });
}
const lookup = dns.lookup;
dns.lookup = function (hostname, ...rest) {
  if (LOCAL.has(String(hostname)) || net.isIP(String(hostname))) return lookup.call(this, hostname, ...rest);
  record("dns", String(hostname));
  const callback = rest.find((a) => typeof a === "function");
  if (callback) process.nextTick(() => callback(notFound(hostname)));
};
const plookup = dns.promises.lookup;
dns.promises.lookup = function (hostname, ...rest) {
  if (LOCAL.has(String(hostname)) || net.isIP(String(hostname))) return plookup.call(this, hostname, ...rest);
  record("dns", String(hostname));
  return Promise.reject(notFound(hostname));
};

const send = dgram.Socket.prototype.send;
dgram.Socket.prototype.send = function (...args) {
  const address = args.find((a, i) => i > 0 && typeof a === "string");
  if (address !== undefined && !LOCAL.has(address)) {
    record("udp", address);
    return;
  }
  return send.apply(this, args);
};
