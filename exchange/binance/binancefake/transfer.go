package binancefake

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

// The funding wallet and the user universal transfer between it and the
// spot wallet, as Binance documents them:
//   - POST /sapi/v1/asset/transfer (USER_DATA, Weight(UID) 900): type,
//     asset, amount; answers {"tranId":...}. Only MAIN_FUNDING and
//     FUNDING_MAIN are served here; the other documented types
//     (MAIN_UMFUTURE, ...) are refused as Binance refuses an unknown one.
//     developers.binance.com/docs/wallet/asset/user-universal-transfer
//   - GET /sapi/v1/asset/transfer (USER_DATA, Weight(IP) 1): type
//     (mandatory), startTime, endTime (without both, the last 7 days),
//     current (default 1), size (default 10, at most 100); answers
//     {"total":n,"rows":[{asset, amount, type, status, tranId,
//     timestamp}]}, status CONFIRMED, FAILED or PENDING.
//     developers.binance.com/docs/wallet/asset/query-user-universal-transfer
//   - POST /sapi/v1/asset/get-funding-asset (USER_DATA, Weight(IP) 1):
//     optional asset, needBtcValuation; answers [{asset, free, locked,
//     freeze, withdrawing, btcValuation}] for the non-zero assets.
//     developers.binance.com/docs/wallet/asset/funding-wallet
//
// Transfers complete at once (CONFIRMED). A transfer from a wallet that
// holds less than the amount is refused with -5013 "Asset transfer failed:
// insufficient balance" (the code is UNCONFIRMED: see
// docs/exchanges/binance.md).

// transfer is one universal transfer the fake executed.
type transfer struct {
	id     int64
	typ    string
	asset  string
	amount decimal.Decimal
	status string
	time   time.Time
}

// transferTypes are the universal transfer types the fake serves.
var transferTypes = []string{"MAIN_FUNDING", "FUNDING_MAIN"}

func (s *Server) transferRoutes() []*route {
	weightOf := func(n int) func(url.Values) int { return func(url.Values) int { return n } }
	return []*route{
		{method: http.MethodPost, path: "/sapi/v1/asset/transfer", signed: true, sapi: "uid", weight: weightOf(900),
			allowed: []string{"type", "asset", "amount", "fromSymbol", "toSymbol"}, required: []string{"type", "asset", "amount"},
			handle: s.handleTransfer},
		{method: http.MethodGet, path: "/sapi/v1/asset/transfer", signed: true, sapi: "ip", weight: weightOf(1),
			allowed: []string{"type", "startTime", "endTime", "current", "size", "fromSymbol", "toSymbol"}, required: []string{"type"},
			handle: s.handleTransferHistory},
		{method: http.MethodPost, path: "/sapi/v1/asset/get-funding-asset", signed: true, sapi: "ip", weight: weightOf(1),
			allowed: []string{"asset", "needBtcValuation"}, handle: s.handleFundingAsset},
	}
}

// TransfersOf counts the universal transfers the fake executed of amount
// of asset on the account, in both directions.
func (s *Server) TransfersOf(apiKey, asset, amount string) int {
	want := decimal.RequireFromString(amount)
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[apiKey]
	if a == nil {
		return 0
	}
	n := 0
	for _, t := range a.transfers {
		if t.asset == asset && t.amount.Equal(want) {
			n++
		}
	}
	return n
}

// Funding returns the free amount of asset in the account's funding
// wallet.
func (s *Server) Funding(apiKey, asset string) decimal.Decimal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.accounts[apiKey]; a != nil {
		return a.funding[asset]
	}
	return decimal.Zero
}

// TransferCalls counts the POST /sapi/v1/asset/transfer calls that
// passed authentication, executed or refused.
func (s *Server) TransferCalls() int {
	return int(s.transferCalls.Load())
}

// TransferCallsOf counts the POST /sapi/v1/asset/transfer calls of
// amount of asset that passed authentication, executed or refused.
func (s *Server) TransferCallsOf(asset, amount string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.transferCallsOf[asset+" "+decimal.RequireFromString(amount).String()]
}

func (s *Server) handleTransfer(c *call) response {
	s.transferCalls.Add(1)
	if amount, err := decimal.NewFromString(c.get("amount")); err == nil {
		s.mu.Lock()
		s.transferCallsOf[c.get("asset")+" "+amount.String()]++
		s.mu.Unlock()
	}
	a := c.account
	if a.noTransfer {
		return apiErr(http.StatusUnauthorized, -2015, "Invalid API-key, IP, or permissions for action.")
	}
	typ := c.get("type")
	if !slices.Contains(transferTypes, typ) {
		return apiErr(http.StatusBadRequest, -1100, "Illegal characters found in parameter 'type'.")
	}
	asset := c.get("asset")
	if !coinKnown(asset) {
		return apiErr(http.StatusBadRequest, -5003, "You don't have this asset.")
	}
	amount, bad, good := parseAmount("amount", c.get("amount"), 8)
	if !good {
		return bad
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	from, to := a.free, a.funding
	if typ == "FUNDING_MAIN" {
		from, to = a.funding, a.free
	}
	if from[asset].LessThan(amount) {
		return apiErr(http.StatusBadRequest, -5013, "Asset transfer failed: insufficient balance")
	}
	from[asset] = from[asset].Sub(amount)
	to[asset] = to[asset].Add(amount)
	s.nextID++
	t := &transfer{id: 10000000000 + s.nextID, typ: typ, asset: asset, amount: amount, status: "CONFIRMED", time: c.now}
	a.transfers = append(a.transfers, t)
	a.touch(c.now)
	return ok([]byte(`{"tranId":` + strconv.FormatInt(t.id, 10) + `}`))
}

func (s *Server) handleTransferHistory(c *call) response {
	typ := c.get("type")
	if !slices.Contains(transferTypes, typ) {
		return apiErr(http.StatusBadRequest, -1100, "Illegal characters found in parameter 'type'.")
	}
	now := c.now.UnixMilli()
	start, end := now-(7*24*time.Hour).Milliseconds(), now
	for name, dst := range map[string]*int64{"startTime": &start, "endTime": &end} {
		if v := c.get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return illegal(name, "^[0-9]{1,20}$")
			}
			*dst = n
		}
	}
	if start < now-(183*24*time.Hour).Milliseconds() {
		// Binance serves the last 6 months only.
		start = now - (183 * 24 * time.Hour).Milliseconds()
	}
	current, size := 1, 10
	for name, dst := range map[string]*int{"current": &current, "size": &size} {
		if v := c.get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return illegal(name, "^[0-9]{1,20}$")
			}
			*dst = n
		}
	}
	size = min(size, 100)
	s.mu.Lock()
	var rows []map[string]any
	ts := c.account.transfers
	for i := len(ts) - 1; i >= 0; i-- { // newest first
		t := ts[i]
		ms := t.time.UnixMilli()
		if t.typ != typ || ms < start || ms > end {
			continue
		}
		rows = append(rows, map[string]any{
			"asset": t.asset, "amount": t.amount.String(), "type": t.typ, "status": t.status,
			"tranId": t.id, "timestamp": ms,
		})
	}
	s.mu.Unlock()
	out := map[string]any{"total": len(rows)}
	if from := (current - 1) * size; from < len(rows) {
		// Binance leaves rows out of an empty answer.
		out["rows"] = rows[from:min(from+size, len(rows))]
	}
	body, _ := json.Marshal(out)
	return ok(body)
}

func (s *Server) handleFundingAsset(c *call) response {
	if v := c.get("needBtcValuation"); v != "" && v != "true" && v != "false" {
		return illegal("needBtcValuation", "true, false")
	}
	only := c.get("asset")
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := []map[string]any{}
	assets := make([]string, 0, len(c.account.funding))
	for asset := range c.account.funding {
		assets = append(assets, asset)
	}
	slices.Sort(assets)
	for _, asset := range assets {
		free := c.account.funding[asset]
		if free.IsZero() || (only != "" && asset != only) {
			continue
		}
		rows = append(rows, map[string]any{
			"asset": asset, "free": free.String(), "locked": "0", "freeze": "0", "withdrawing": "0", "btcValuation": "0",
		})
	}
	body, _ := json.Marshal(rows)
	return ok(body)
}
