// Drives the generated TypeScript client against a running gateway on sim:
// run by client/internal/oapitest's TestTypeScriptClient (which starts the
// gateway and sets EXGATE_URL, EXGATE_API_KEY, EXGATE_SECRET_KEY and
// EXGATE_EXCHANGE_KEY). Prints one line per check; exits 1 on the first
// failure.
import createClient from "openapi-fetch";
import type { paths } from "./schema.js";
import { signingMiddleware } from "./sign.js";

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const client = createClient<paths>({ baseUrl: env("EXGATE_URL") });
client.use(signingMiddleware({
  apiKey: env("EXGATE_API_KEY"),
  secret: env("EXGATE_SECRET_KEY"),
  exchangeKey: env("EXGATE_EXCHANGE_KEY"),
}));

function check(ok: boolean, what: string, detail?: unknown): void {
  if (!ok) {
    console.error(`FAIL ${what}`, detail === undefined ? "" : JSON.stringify(detail));
    process.exit(1);
  }
  console.log(`ok ${what}`);
}

// Decimal arithmetic on the price step without floats: scale to integers.
function halfOnStep(bid: string, step: string): string {
  const scale = Math.max(decimals(bid), decimals(step));
  const toInt = (s: string) => BigInt(s.replace(".", "") + "0".repeat(scale - decimals(s)));
  const b = toInt(bid), st = toInt(step);
  const v = (b / 2n / st) * st;
  const s = v.toString().padStart(scale + 1, "0");
  return scale === 0 ? s : `${s.slice(0, -scale)}.${s.slice(-scale)}`.replace(/\.?0+$/, "");
}
function decimals(s: string): number {
  const i = s.indexOf(".");
  return i < 0 ? 0 : s.length - i - 1;
}

const sym = await client.GET("/v1/market/symbols", { params: { query: { asset1: "BTC", asset2: "USDT", signature: "" } } });
check(sym.data?.length === 1, "symbols", sym.error);
const book = await client.GET("/v1/market/order-book", { params: { query: { asset1: "BTC", asset2: "USDT", signature: "" } } });
check((book.data?.bids.length ?? 0) > 0, "order book", book.error);
const price = halfOnStep(book.data!.bids[0]!.price, sym.data![0]!.priceStep);

const quantity = "0.1001";
const clientOrderId = "ts:limit.1";
const placed = await client.POST("/v1/order/limit", {
  body: { asset1: "BTC", asset2: "USDT", side: "BUY", quantity, price, clientOrderId, signature: "" },
});
check(placed.data?.status === "PENDING", "limit order rests", placed.error);
check(String(placed.data!.quantity) === quantity, `quantity ${quantity} reads back exactly`, placed.data!.quantity);
check(String(placed.data!.price) === price, `price ${price} reads back exactly`, placed.data!.price);

const read = await client.GET("/v1/order", { params: { query: { clientOrderId, signature: "" } } });
check(read.data?.id === placed.data!.id && String(read.data.quantity) === quantity, "order read by clientOrderId", read.error);

// A quantity sent as a JSON number: its literal text is what is signed.
const tested = await client.POST("/v1/order/limit", {
  body: { asset1: "BTC", asset2: "USDT", side: "BUY", quantity: 0.1001, price, test: true, signature: "" },
});
check(tested.data?.status === "TEST" && String(tested.data.quantity) === quantity, "test order with a number quantity", tested.error);

const canceled = await client.POST("/v1/order/cancel", { body: { clientOrderId, signature: "" } });
check(canceled.data?.status === "CANCELED", "cancel by clientOrderId", canceled.error);

const missing = await client.POST("/v1/order/cancel", { body: { clientOrderId: "ts-never-placed", signature: "" } });
check(missing.response.status === 404 && missing.error?.code === "NOT_FOUND" && missing.error.status === 404,
  "cancel of an unknown order is a typed 404 NOT_FOUND problem", missing.error);
const bad = await client.POST("/v1/order/limit", {
  body: { asset1: "BTC", asset2: "USDT", side: "BUY", quantity, price: "0", signature: "" },
});
check(bad.error?.code === "INVALID_PARAMETER" && bad.error.param === "price", "price 0 is INVALID_PARAMETER naming price", bad.error);

// Deposit amounts: the parsed numbers print back as the text the gateway wrote.
const deps = await client.GET("/v1/wallet/recent-deposits", { params: { query: { signature: "" } } });
const raw = await client.GET("/v1/wallet/recent-deposits", { params: { query: { signature: "" } }, parseAs: "text" });
const texts = [...(raw.data as string).matchAll(/"amount":(-?[0-9][0-9.eE+-]*)/g)].map((m) => m[1]);
check((deps.data?.length ?? 0) >= 20 && deps.data!.length === texts.length, `${texts.length} deposits read twice`, deps.error);
const changed = deps.data!.filter((d, i) => String(d.amount) !== texts[i]);
check(changed.length === 0, "every deposit amount reads back exactly", changed.slice(0, 3));
console.log("all checks passed");
