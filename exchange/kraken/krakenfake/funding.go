package krakenfake

import (
	"crypto/sha256"
	"fmt"
	"math/big"
	"net/url"
	"slices"

	"github.com/shopspring/decimal"
)

// fundingMethod is a deposit and withdrawal method of an asset.
type fundingMethod struct {
	Asset, Method, Network string
	Fee, Minimum           string
	GenAddress, Tag        bool
}

// fundingMethods are the fake's funding methods, named as Kraken names
// them.
var fundingMethods = []fundingMethod{
	{Asset: "XXBT", Method: "Bitcoin", Network: "Bitcoin", Fee: "0.00015", Minimum: "0.0001", GenAddress: true},
	{Asset: "XXBT", Method: "Bitcoin Lightning", Network: "Lightning", Fee: "0", Minimum: "0.00001"},
	{Asset: "XETH", Method: "Ether (Hex)", Network: "Ethereum", Fee: "0.0015", Minimum: "0.005", GenAddress: true},
	{Asset: "USDT", Method: "Tether USD (ERC20)", Network: "Ethereum", Fee: "5", Minimum: "5", GenAddress: true},
	{Asset: "USDT", Method: "Tether USD (TRC20)", Network: "Tron", Fee: "1", Minimum: "1", GenAddress: true},
	{Asset: "SOL", Method: "Solana", Network: "Solana", Fee: "0.01", Minimum: "0.05", GenAddress: true},
	{Asset: "XXRP", Method: "Ripple XRP", Network: "Ripple", Fee: "0.2", Minimum: "1", GenAddress: true, Tag: true},
	{Asset: "XXDG", Method: "Dogecoin", Network: "Dogecoin", Fee: "4", Minimum: "20", GenAddress: true},
}

func methodFor(assetID, method string) (fundingMethod, bool) {
	for _, m := range fundingMethods {
		if m.Asset == assetID && m.Method == method {
			return m, true
		}
	}
	return fundingMethod{}, false
}

// depositAddress is a deposit address of an account.
type depositAddress struct {
	Address, Tag string
}

// withdrawal is a withdrawal of an account.
type withdrawal struct {
	Refid, Asset, Method, Network, Key, Info string
	Amount, Fee                              decimal.Decimal
	Time                                     int64
	Status, StatusProp, Txid                 string
}

// assetParam resolves an asset parameter (id or altname) to an id;
// required reports whether it must be present.
func (s *Server) assetParam(f url.Values, required bool) (string, error) {
	v := f.Get("asset")
	if v == "" {
		if required {
			return "", invalidArg("asset")
		}
		return "", nil
	}
	a, ok := s.assetByName(v)
	if !ok {
		return "", errUnknownAsset
	}
	return a.ID, nil
}

func (s *Server) depositMethods(_ *account, f url.Values) (any, error) {
	id, err := s.assetParam(f, true)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, m := range fundingMethods {
		if m.Asset != id {
			continue
		}
		row := map[string]any{"method": m.Method, "limit": false, "fee": "0.0000000000", "minimum": m.Minimum}
		if m.GenAddress {
			row["gen-address"] = true
		}
		out = append(out, row)
	}
	return out, nil
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

func base58(b []byte) string {
	n := new(big.Int).SetBytes(b)
	var out []byte
	base, mod := big.NewInt(58), new(big.Int)
	for n.Sign() > 0 {
		n.DivMod(n, base, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	slices.Reverse(out)
	return string(out)
}

// newAddress makes a deterministic address in the method's format.
func newAddress(key string, m fundingMethod, n int) depositAddress {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%s|%d", key, m.Asset, m.Method, n)))
	hx := fmt.Sprintf("%x", h)
	b58 := base58(h[:]) + base58(h[16:])
	switch m.Network {
	case "Bitcoin":
		return depositAddress{Address: "bc1q" + hx[:38]}
	case "Ethereum":
		return depositAddress{Address: "0x" + hx[:40]}
	case "Tron":
		return depositAddress{Address: "T" + b58[:33]}
	case "Ripple":
		return depositAddress{Address: "r" + b58[:33], Tag: fmt.Sprint(new(big.Int).SetBytes(h[:4]).Uint64())}
	case "Dogecoin":
		return depositAddress{Address: "D" + b58[:33]}
	default:
		return depositAddress{Address: b58[:44]}
	}
}

func (s *Server) depositAddresses(a *account, f url.Values) (any, error) {
	id, err := s.assetParam(f, true)
	if err != nil {
		return nil, err
	}
	method := f.Get("method")
	if method == "" {
		return nil, invalidArg("method")
	}
	m, ok := methodFor(id, method)
	if !ok {
		return nil, errNoMethod
	}
	if m.Network == "Lightning" && f.Get("amount") == "" {
		return nil, invalidArg("amount")
	}
	k := id + "|" + method
	fresh := f.Get("new") == "true"
	if fresh {
		a.addresses[k] = append([]depositAddress{newAddress(a.Key, m, len(a.addresses[k]))}, a.addresses[k]...)
	}
	out := []map[string]any{}
	for i, addr := range a.addresses[k] {
		row := map[string]any{"address": addr.Address, "expiretm": "0"}
		if fresh && i == 0 {
			row["new"] = true
		}
		if addr.Tag != "" {
			row["tag"] = addr.Tag
		}
		out = append(out, row)
	}
	return out, nil
}

func (s *Server) depositStatus(a *account, f url.Values) (any, error) {
	id, err := s.assetParam(f, false)
	if err != nil {
		return nil, err
	}
	method := f.Get("method")
	rows := slices.Clone(a.deposits)
	slices.SortStableFunc(rows, func(x, y Deposit) int { return int(y.Time - x.Time) })
	out := []map[string]any{}
	for _, d := range rows {
		if (id != "" && d.Asset != id) || (method != "" && d.Method != method) {
			continue
		}
		row := map[string]any{
			"method": d.Method, "aclass": "currency", "asset": d.Asset, "refid": d.Refid,
			"txid": d.Txid, "info": d.Info, "amount": d.Amount, "fee": d.Fee, "time": d.Time, "status": d.Status,
		}
		if d.StatusProp != "" {
			row["status-prop"] = d.StatusProp
		}
		out = append(out, row)
	}
	return out, nil
}

func (s *Server) withdrawMethods(_ *account, f url.Values) (any, error) {
	id, err := s.assetParam(f, false)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, m := range fundingMethods {
		if id != "" && m.Asset != id {
			continue
		}
		out = append(out, map[string]any{"asset": m.Asset, "method": m.Method, "network": m.Network, "minimum": m.Minimum})
	}
	return out, nil
}

func (s *Server) withdrawAddresses(a *account, f url.Values) (any, error) {
	id, err := s.assetParam(f, false)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, k := range a.WithdrawKeys {
		if (id != "" && k.Asset != id) ||
			(f.Get("method") != "" && k.Method != f.Get("method")) ||
			(f.Get("key") != "" && k.Name != f.Get("key")) ||
			(f.Get("verified") != "" && fmt.Sprint(k.Verified) != f.Get("verified")) {
			continue
		}
		asset, _ := s.assetByName(k.Asset)
		row := map[string]any{"address": k.Address, "asset": asset.Altname, "method": k.Method, "key": k.Name, "verified": k.Verified}
		if k.Tag != "" {
			row["tag"] = k.Tag
		}
		out = append(out, row)
	}
	return out, nil
}

// withdrawKey finds the saved key of an asset.
func withdrawKeyOf(a *account, assetID, name string) (WithdrawKey, bool) {
	for _, k := range a.WithdrawKeys {
		if k.Name == name && k.Asset == assetID {
			return k, true
		}
	}
	return WithdrawKey{}, false
}

// withdrawalQuote checks asset, key and amount and returns the key, its
// method, the amount and the fee.
func (s *Server) withdrawalQuote(a *account, f url.Values) (WithdrawKey, fundingMethod, decimal.Decimal, decimal.Decimal, error) {
	var zero decimal.Decimal
	id, err := s.assetParam(f, true)
	if err != nil {
		return WithdrawKey{}, fundingMethod{}, zero, zero, err
	}
	if f.Get("key") == "" {
		return WithdrawKey{}, fundingMethod{}, zero, zero, invalidArg("key")
	}
	k, ok := withdrawKeyOf(a, id, f.Get("key"))
	if !ok {
		return WithdrawKey{}, fundingMethod{}, zero, zero, errUnknownKey
	}
	m, ok := methodFor(id, k.Method)
	if !ok {
		return WithdrawKey{}, fundingMethod{}, zero, zero, errNoMethod
	}
	amount, err := decimal.NewFromString(f.Get("amount"))
	if err != nil || amount.Sign() <= 0 {
		return WithdrawKey{}, fundingMethod{}, zero, zero, invalidArg("amount")
	}
	fee := decimal.RequireFromString(m.Fee)
	if amount.LessThanOrEqual(fee) || amount.LessThan(decimal.RequireFromString(m.Minimum)) {
		return WithdrawKey{}, fundingMethod{}, zero, zero, errInvalidAmount
	}
	return k, m, amount, fee, nil
}

func (s *Server) withdrawInfo(a *account, f url.Values) (any, error) {
	k, m, amount, fee, err := s.withdrawalQuote(a, f)
	if err != nil {
		return nil, err
	}
	dec := s.assetDecimals(k.Asset)
	limit := decimal.Max(s.available(a, k.Asset).Sub(fee), decimal.Zero)
	return map[string]string{
		"method": m.Method,
		"limit":  limit.StringFixed(dec),
		"amount": amount.Sub(fee).StringFixed(dec),
		"fee":    fee.StringFixed(dec),
	}, nil
}

func (s *Server) withdraw(a *account, f url.Values) (any, error) {
	k, m, amount, fee, err := s.withdrawalQuote(a, f)
	if err != nil {
		return nil, err
	}
	if !k.Verified {
		return nil, errUnknownKey
	}
	if addr := f.Get("address"); addr != "" && addr != k.Address {
		return nil, errBadAddress
	}
	if v := f.Get("max_fee"); v != "" {
		maxFee, err := decimal.NewFromString(v)
		if err != nil {
			return nil, invalidArg("max_fee")
		}
		if fee.GreaterThan(maxFee) {
			return nil, errMaxFee
		}
	}
	if s.available(a, k.Asset).LessThan(amount) {
		return nil, errFundsShort
	}
	a.balances[k.Asset] = a.balances[k.Asset].Sub(amount)
	s.seq++
	h := sha256.Sum256([]byte(fmt.Sprintf("withdrawal|%s|%d", a.Key, s.seq)))
	w := &withdrawal{
		Refid: "FT" + base58(h[:])[:28], Asset: k.Asset, Method: m.Method, Network: m.Network, Key: k.Name,
		Info: k.Address, Amount: amount.Sub(fee), Fee: fee, Time: s.now().Unix(), Status: "Initial",
	}
	a.withdrawals = append(a.withdrawals, w)
	return map[string]string{"refid": w.Refid}, nil
}

func (s *Server) withdrawStatus(a *account, f url.Values) (any, error) {
	id, err := s.assetParam(f, false)
	if err != nil {
		return nil, err
	}
	method := f.Get("method")
	out := []map[string]any{}
	for i := len(a.withdrawals) - 1; i >= 0; i-- {
		w := a.withdrawals[i]
		if (id != "" && w.Asset != id) || (method != "" && w.Method != method) {
			continue
		}
		dec := s.assetDecimals(w.Asset)
		row := map[string]any{
			"method": w.Method, "network": w.Network, "aclass": "currency", "asset": w.Asset,
			"refid": w.Refid, "txid": w.Txid, "info": w.Info,
			"amount": w.Amount.StringFixed(dec), "fee": w.Fee.StringFixed(dec),
			"time": w.Time, "status": w.Status, "key": w.Key,
		}
		if w.StatusProp != "" {
			row["status-prop"] = w.StatusProp
		}
		out = append(out, row)
	}
	return out, nil
}
