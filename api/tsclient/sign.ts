// A signing middleware for an openapi-fetch client of exgate (docs/clients.md).
// It builds the parameter string exactly as the gateway verifies it
// (api/openapi.yaml, "Signing"): for a GET the raw query as sent, for a POST
// the JSON body's members in order as name=value (a string's decoded content,
// a number's literal text), joined by '&'. It adds a `timestamp` when the
// request has none (the gateway requires one on every request, GETs
// included), then the HMAC-SHA256 `signature` last. Its timestamps strictly
// increase, so that two identical requests in one millisecond do not share
// a signature (the gateway accepts a signature once).
import { createHmac } from "node:crypto";
import type { Middleware } from "openapi-fetch";

export interface Credentials {
  apiKey: string;
  secret: string;
  exchangeKey: string;
  now?: () => number; // milliseconds since the epoch; Date.now by default
}

export function signingMiddleware(c: Credentials): Middleware {
  const now = c.now ?? Date.now;
  let last = 0;
  const stamp = (): number => {
    last = Math.max(now(), last + 1);
    return last;
  };
  const hmac = (params: string) => createHmac("sha256", c.secret).update(params).digest("hex");
  return {
    async onRequest({ request }) {
      const headers = new Headers(request.headers);
      headers.set("X-API-KEY", c.apiKey);
      headers.set("X-API-EXCHANGE-KEY", c.exchangeKey);
      const url = new URL(request.url);
      if (request.method === "GET" || request.method === "HEAD") {
        const pairs = url.search.replace(/^\?/, "").split("&")
          .filter((p) => p !== "" && !p.startsWith("signature="));
        if (!pairs.some((p) => p.startsWith("timestamp="))) pairs.push(`timestamp=${stamp()}`);
        const params = pairs.join("&");
        url.search = `${params}${params ? "&" : ""}signature=${hmac(params)}`;
        return new Request(url, { method: request.method, headers, signal: request.signal });
      }
      const members = flatMembers(await request.text()).filter((m) => m.name !== "signature");
      if (!members.some((m) => m.name === "timestamp")) {
        const ts = String(stamp());
        members.push({ name: "timestamp", json: ts, value: ts });
      }
      const sig = hmac(members.map((m) => `${m.name}=${m.value}`).join("&"));
      members.push({ name: "signature", json: JSON.stringify(sig), value: sig });
      const body = "{" + members.map((m) => `${JSON.stringify(m.name)}:${m.json}`).join(",") + "}";
      headers.set("Content-Type", "application/json");
      return new Request(url, { method: request.method, headers, body, signal: request.signal });
    },
  };
}

interface Member {
  name: string;
  json: string; // the member's value as written in the body
  value: string; // as it enters the parameter string
}

// flatMembers reads a flat JSON object's members in order, keeping each
// number's literal text (JSON.parse would turn it into a float). Objects and
// arrays as values are refused, as the gateway refuses them.
export function flatMembers(text: string): Member[] {
  const token = /\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|[{}:,\[\]])/y;
  const next = (): string => {
    const m = token.exec(text);
    if (!m) throw new Error(`sign: not a flat JSON object at ${token.lastIndex}: ${text}`);
    return m[1]!;
  };
  const out: Member[] = [];
  if (next() !== "{") throw new Error("sign: the body is not a JSON object");
  for (;;) {
    let t = next();
    if (t === "}") break;
    if (t === ",") t = next();
    const name = JSON.parse(t) as string;
    if (next() !== ":") throw new Error("sign: ':' expected");
    const json = next();
    if (json === "{" || json === "[") throw new Error(`sign: member ${name} is an object or an array`);
    const value = json.startsWith('"') ? (JSON.parse(json) as string) : json;
    out.push({ name, json, value });
  }
  return out;
}
