package bybit_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/client"
)

// call sends one signed request through the gateway and returns its
// status and body.
func (a *apiEnv) call(t *testing.T, method, path string, kv ...string) (int, []byte) {
	t.Helper()
	var ps []client.Param
	for i := 0; i+1 < len(kv); i += 2 {
		ps = append(ps, client.Param{Name: kv[i], Value: kv[i+1]})
	}
	status, body, err := a.c.Do(t.Context(), method, path, ps)
	if _, problem := errors.AsType[*client.Error](err); err != nil && !problem {
		t.Fatal(err)
	}
	return status, body
}

func decodeAs[T any](t *testing.T, status int, body []byte) T {
	t.Helper()
	var v T
	if status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", status, body)
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return v
}

func wantStatus(t *testing.T, status int, body []byte, want int, code exgate.Code, param string) {
	t.Helper()
	var p struct {
		Code  exgate.Code `json:"code"`
		Param string      `json:"param"`
	}
	_ = json.Unmarshal(body, &p)
	if status != want || p.Code != code || (param != "" && p.Param != param) {
		t.Fatalf("HTTP %d %s (param %q), want %d %s %q: %s", status, p.Code, p.Param, want, code, param, body)
	}
}

// Transfers between the unified (spot) and funding wallets through the
// API, then a withdrawal the funding wallet could not cover before.
func TestTransfersThroughTheAPI(t *testing.T) {
	a := newAPIEnv(t, envOptions{})
	transfer := func(asset, amount, from, to, ref string) (int, []byte) {
		kv := []string{"asset", asset, "amount", amount, "from", from, "to", to}
		if ref != "" {
			kv = append(kv, "clientTransferId", ref)
		}
		return a.call(t, "POST", "/v1/wallet/transfer", kv...)
	}
	wallet := func(w string) map[string]string {
		out := map[string]string{}
		st, b := a.call(t, "GET", "/v1/wallet/account-balance", "wallet", w)
		for _, bal := range decodeAs[[]exgate.Balance](t, st, b) {
			out[bal.Asset] = bal.Available.String()
		}
		return out
	}
	// 6000 USDT cannot leave the funding wallet (5000) yet.
	st, b := a.call(t, "POST", "/v1/wallet/withdraw", "asset", "USDT", "network", "TRX", "address", addressBook[0].Address, "amount", "6000")
	wantStatus(t, st, b, http.StatusUnprocessableEntity, exgate.CodeInsufficientFunds, "")

	st, b = transfer("USDT", "1500", "spot", "funding", "fund-1")
	out := decodeAs[exgate.Transfer](t, st, b)
	if out.Status != exgate.TransferCompleted || out.ClientTransferID != "fund-1" || out.ExchangeID == "" || out.From != exgate.WalletSpot || out.To != exgate.WalletFunding {
		t.Fatalf("spot to funding: %+v", out)
	}
	if spot, funding := wallet("spot"), wallet("funding"); spot["USDT"] != "198500" || funding["USDT"] != "6500" {
		t.Fatalf("after: spot %v, funding %v", spot, funding)
	}
	// The same client id again is the same transfer, nothing sent.
	n := a.srv.Transfers("bybit-key")
	st, b = transfer("USDT", "1500", "spot", "funding", "fund-1")
	if again := decodeAs[exgate.Transfer](t, st, b); again.ID != out.ID || a.srv.Transfers("bybit-key") != n {
		t.Fatalf("again: %+v, %d transfers", again, a.srv.Transfers("bybit-key"))
	}
	st, b = transfer("USDT", "10", "funding", "spot", "")
	back := decodeAs[exgate.Transfer](t, st, b)
	st, b = a.call(t, "GET", "/v1/wallet/transfers", "asset", "USDT")
	if hist := decodeAs[[]exgate.Transfer](t, st, b); len(hist) != 2 || hist[0].ExchangeID != back.ExchangeID && hist[1].ExchangeID != back.ExchangeID {
		t.Fatalf("history %+v", hist)
	}
	st, b = a.call(t, "GET", "/v1/wallet/transfer", "clientTransferId", "fund-1")
	if got := decodeAs[exgate.Transfer](t, st, b); got.ExchangeID != out.ExchangeID {
		t.Fatalf("lookup %+v", got)
	}
	// Now the funding wallet covers it.
	st, b = a.call(t, "POST", "/v1/wallet/withdraw", "asset", "USDT", "network", "TRX", "address", addressBook[0].Address, "amount", "6000")
	if w := decodeAs[exgate.Withdrawal](t, st, b); !w.TotalAmount.Equal(dec("6001")) {
		t.Fatalf("withdrawal %+v", w)
	}
	// Refusals: more than the wallet holds, an unknown asset.
	st, b = transfer("BTC", "3", "spot", "funding", "")
	wantStatus(t, st, b, http.StatusUnprocessableEntity, exgate.CodeInsufficientFunds, "")
	st, b = transfer("NOSUCHCOIN", "1", "spot", "funding", "")
	wantStatus(t, st, b, http.StatusBadRequest, exgate.CodeInvalidParameter, "asset")
	if a.srv.Transfers("bybit-key") != n+1 {
		t.Errorf("%d transfers on the fake, want %d", a.srv.Transfers("bybit-key"), n+1)
	}
}
