package httpapi

import (
	"net/http"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// params gives a route typed, validated access to its parameters. Every
// route lists the names it takes; any other name, or a name given twice, is
// INVALID_PARAMETER.
type params struct {
	byName map[string]param
}

// gatewayParams are the gateway's own signed parameters, valid everywhere.
var gatewayParams = []string{"timestamp", "recvWindow"}

func newParams(ps []param, allowed ...string) (params, error) {
	m := make(map[string]param, len(ps))
	for _, p := range ps {
		if _, dup := m[p.name]; dup {
			return params{}, exgate.ParamError(clip(p.name), "parameter %q is given more than once", clip(p.name))
		}
		known := false
		for _, a := range allowed {
			if a == p.name {
				known = true
				break
			}
		}
		for _, a := range gatewayParams {
			if a == p.name {
				known = true
			}
		}
		if !known {
			return params{}, exgate.ParamError(clip(p.name), "unknown parameter %q", clip(p.name))
		}
		m[p.name] = p
	}
	return params{byName: m}, nil
}

// str returns a string parameter ("" when absent). A JSON body must give it
// as a string.
func (ps params) str(name string, required bool) (string, error) {
	p, ok := ps.byName[name]
	if !ok {
		if required {
			return "", exgate.ParamError(name, "%s is required", name)
		}
		return "", nil
	}
	if !p.isString {
		return "", exgate.ParamError(name, "%s must be a string", name)
	}
	if required && p.value == "" {
		return "", exgate.ParamError(name, "%s must not be empty", name)
	}
	return p.value, nil
}

// asset returns an upper-cased asset code of 1 to 20 letters and digits.
func (ps params) asset(name string, required bool) (string, error) {
	v, err := ps.str(name, required)
	if err != nil || v == "" {
		return "", err
	}
	if !isCode(v, 20) {
		return "", exgate.ParamError(name, "%s must be an asset code of 1 to 20 letters and digits, not %q", name, clip(v))
	}
	return exgate.NormalizeAsset(v), nil
}

// network returns an upper-cased network code.
func (ps params) network(name string, required bool) (string, error) {
	v, err := ps.str(name, required)
	if err != nil || v == "" {
		return "", err
	}
	if !isCode(v, 32) {
		return "", exgate.ParamError(name, "%s must be a network code of letters, digits, - or _, not %q", name, clip(v))
	}
	return exgate.NormalizeAsset(v), nil
}

func isCode(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// positiveDecimal returns a decimal > 0 given as a JSON number or a string.
func (ps params) positiveDecimal(name string, required bool) (decimal.Decimal, bool, error) {
	p, ok := ps.byName[name]
	if !ok {
		if required {
			return decimal.Decimal{}, false, exgate.ParamError(name, "%s is required", name)
		}
		return decimal.Decimal{}, false, nil
	}
	d, err := exgate.ParseDecimal(p.value)
	if err != nil {
		return decimal.Decimal{}, false, exgate.ParamError(name, "%s must be a decimal number of at most %d characters and an exponent within ±%d, not %q", name, exgate.MaxDecimalText, exgate.MaxDecimalExponent, clip(p.value))
	}
	if !d.IsPositive() {
		return decimal.Decimal{}, false, exgate.ParamError(name, "%s must be greater than zero", name)
	}
	return d, true, nil
}

// limit returns an integer in [1, max], or def when absent.
func (ps params) limit(name string, def, max int) (int, error) {
	p, ok := ps.byName[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(p.value)
	if err != nil || n < 1 || n > max {
		return 0, exgate.ParamError(name, "%s must be an integer from 1 to %d, not %q", name, max, clip(p.value))
	}
	return n, nil
}

// symbol reads asset1 and asset2.
func (ps params) symbol() (exgate.Symbol, error) {
	base, err := ps.asset("asset1", true)
	if err != nil {
		return exgate.Symbol{}, err
	}
	quote, err := ps.asset("asset2", true)
	if err != nil {
		return exgate.Symbol{}, err
	}
	if base == quote {
		return exgate.Symbol{}, exgate.ParamError("asset2", "asset1 and asset2 must differ")
	}
	return exgate.Symbol{Base: base, Quote: quote}, nil
}

// clientRef reads a client-chosen idempotency id from the body or the
// Idempotency-Key header; if both are given they must agree.
func (ps params) clientRef(name string, r *http.Request) (string, error) {
	v, err := ps.str(name, false)
	if err != nil {
		return "", err
	}
	if h := r.Header.Get("Idempotency-Key"); h != "" {
		if v != "" && v != h {
			return "", exgate.ParamError(name, "%s and the Idempotency-Key header differ", name)
		}
		v = h
		name = "Idempotency-Key"
	}
	if v == "" {
		return "", nil
	}
	if len(v) > 64 {
		return "", exgate.ParamError(name, "%s must be at most 64 characters", name)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return "", exgate.ParamError(name, "%s may only hold letters, digits and . _ : -", name)
		}
	}
	return v, nil
}

func (s *Server) handleMarketOrder(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "asset1", "asset2", "side", "quantity", "quantityIn", "clientOrderId", "test")
	if err != nil {
		return err
	}
	req, ref, err := orderRequest(ps, r)
	if err != nil {
		return err
	}
	done, ctx, err := s.marketOrderExtras(w, r, c, ps, &req)
	if done || err != nil {
		return err
	}
	order, err := s.cfg.Ledger.PlaceOrder(ctx, c.cred, req, ref)
	if err != nil {
		return withPending(err, order)
	}
	return writeJSON(w, order)
}

func orderRequest(ps params, r *http.Request) (exgate.OrderRequest, string, error) {
	var req exgate.OrderRequest
	sym, err := ps.symbol()
	if err != nil {
		return req, "", err
	}
	sideText, err := ps.str("side", true)
	if err != nil {
		return req, "", err
	}
	side, err := exgate.ParseSide(sideText)
	if err != nil {
		return req, "", exgate.ParamError("side", "%s", err)
	}
	qty, _, err := ps.positiveDecimal("quantity", true)
	if err != nil {
		return req, "", err
	}
	inText, err := ps.str("quantityIn", true)
	if err != nil {
		return req, "", err
	}
	in, err := exgate.ParseQuantityIn(inText, sym)
	if err != nil {
		return req, "", exgate.ParamError("quantityIn", "%s", err)
	}
	ref, err := ps.clientRef("clientOrderId", r)
	if err != nil {
		return req, "", err
	}
	return exgate.OrderRequest{Symbol: sym, Side: side, Quantity: qty, QuantityIn: in}, ref, nil
}

func (s *Server) handleOrder(w http.ResponseWriter, r *http.Request, c *call) error {
	id, ref, err := lookupRef(c.params, "clientOrderId")
	if err != nil {
		return err
	}
	order, err := s.cfg.Ledger.OrderOf(r.Context(), c.cred, id, ref)
	if err != nil {
		return err
	}
	return writeJSON(w, order)
}

func (s *Server) handleWithdrawal(w http.ResponseWriter, r *http.Request, c *call) error {
	id, ref, err := lookupRef(c.params, "clientWithdrawalId")
	if err != nil {
		return err
	}
	wd, err := s.cfg.Ledger.WithdrawalOf(r.Context(), c.cred, id, ref)
	if err != nil {
		return err
	}
	return writeJSON(w, wd)
}

// lookupRef reads exactly one of id and the client id parameter.
func lookupRef(raw []param, refName string) (id, ref string, err error) {
	ps, err := newParams(raw, "id", refName)
	if err != nil {
		return "", "", err
	}
	if id, err = ps.str("id", false); err != nil {
		return "", "", err
	}
	if ref, err = ps.str(refName, false); err != nil {
		return "", "", err
	}
	if (id == "") == (ref == "") {
		return "", "", exgate.ParamError("id", "give exactly one of id and %s", refName)
	}
	return id, ref, nil
}

func (s *Server) handleKlines(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "asset1", "asset2", "interval", "limit")
	if err != nil {
		return err
	}
	req, err := klineRequest(ps)
	if err != nil {
		return err
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	body, err := exgate.AppendRecentKlinesJSON(r.Context(), c.ex, (*bp)[:0], c.cred, req)
	*bp = body[:0]
	if err != nil {
		return err
	}
	writeRaw(w, body)
	return nil
}

func klineRequest(ps params) (exgate.KlineRequest, error) {
	sym, err := ps.symbol()
	if err != nil {
		return exgate.KlineRequest{}, err
	}
	iv := exgate.Interval1m
	if text, err := ps.str("interval", false); err != nil {
		return exgate.KlineRequest{}, err
	} else if text != "" {
		if iv, err = exgate.ParseInterval(text); err != nil {
			return exgate.KlineRequest{}, exgate.ParamError("interval", "interval must be one of 1m 3m 5m 15m 30m 1h 2h 4h 6h 8h 12h 1d 3d 1w 1M, not %q", clip(text))
		}
	}
	limit, err := ps.limit("limit", exgate.DefaultKlineLimit, exgate.MaxKlineLimit)
	if err != nil {
		return exgate.KlineRequest{}, err
	}
	return exgate.KlineRequest{Symbol: sym, Interval: iv, Limit: limit}, nil
}

func (s *Server) handleOrderBook(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "asset1", "asset2", "limit")
	if err != nil {
		return err
	}
	sym, err := ps.symbol()
	if err != nil {
		return err
	}
	limit, err := ps.limit("limit", exgate.DefaultOrderBookLimit, exgate.MaxOrderBookLimit)
	if err != nil {
		return err
	}
	breq := exgate.OrderBookRequest{Symbol: sym, Limit: limit}
	if enc, ok := exgate.Ability[bookEncoder](c.ex); ok {
		body, err := enc.OrderBookJSON(r.Context(), c.cred, breq)
		if err != nil {
			return err
		}
		writeRaw(w, body)
		return nil
	}
	book, err := c.ex.OrderBook(r.Context(), c.cred, breq)
	if err != nil {
		return err
	}
	s.writeBook(w, book)
	return nil
}

func (s *Server) handleBalances(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "wallet")
	if err != nil {
		return err
	}
	wallet, err := ps.wallet("wallet", false, exgate.WalletSpot)
	if err != nil {
		return err
	}
	bals, err := s.walletBalances(r.Context(), c, wallet)
	if err != nil {
		return err
	}
	if bals == nil {
		bals = []exgate.Balance{}
	}
	return writeJSON(w, bals)
}

func (s *Server) handleDeposits(w http.ResponseWriter, r *http.Request, c *call) error {
	asset, status, err := transferFilter(c.params)
	if err != nil {
		return err
	}
	f := exgate.DepositFilter{Asset: asset, Status: status}
	deps, err := c.ex.RecentDeposits(r.Context(), c.cred, f)
	if err != nil {
		return err
	}
	if deps == nil {
		deps = []exgate.Deposit{}
	}
	return writeJSON(w, deps)
}

// transferFilter reads the optional asset and status of a list of
// deposits or withdrawals (status: pending, completed, failed, canceled).
func transferFilter(raw []param) (asset string, status exgate.TransferStatus, err error) {
	ps, err := newParams(raw, "asset", "status")
	if err != nil {
		return "", "", err
	}
	if asset, err = ps.asset("asset", false); err != nil {
		return "", "", err
	}
	text, err := ps.str("status", false)
	if err != nil || text == "" {
		return asset, "", err
	}
	if status, err = exgate.ParseTransferStatus(text); err != nil {
		return "", "", exgate.ParamError("status", "%s", err)
	}
	return asset, status, nil
}

func (s *Server) handleDepositAddress(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "asset", "network", "amount")
	if err != nil {
		return err
	}
	var req exgate.DepositAddressRequest
	if req.Asset, err = ps.asset("asset", true); err == nil {
		if req.Network, err = ps.network("network", true); err == nil {
			// amount is accepted for compatibility with the spec and
			// validated; no exchange needs it for an address.
			_, _, err = ps.positiveDecimal("amount", false)
		}
	}
	if err != nil {
		return err
	}
	addr, err := c.ex.DepositAddress(r.Context(), c.cred, req)
	if err != nil {
		return err
	}
	return writeJSON(w, addr)
}

func (s *Server) handleWithdraw(w http.ResponseWriter, r *http.Request, c *call) error {
	ps, err := newParams(c.params, "asset", "network", "address", "amount", "tag", "clientWithdrawalId")
	if err != nil {
		return err
	}
	req, ref, err := withdrawalRequest(ps, r)
	if err != nil {
		return err
	}
	ctx, err := s.checkWithdrawalRisk(r.Context(), c, req)
	if err != nil {
		return err
	}
	wd, err := s.cfg.Ledger.Withdraw(ctx, c.cred, req, ref)
	if err != nil {
		return withPending(err, wd)
	}
	return writeJSON(w, wd)
}

func withdrawalRequest(ps params, r *http.Request) (exgate.WithdrawalRequest, string, error) {
	var req exgate.WithdrawalRequest
	var err error
	if req.Asset, err = ps.asset("asset", true); err != nil {
		return req, "", err
	}
	if req.Network, err = ps.network("network", true); err != nil {
		return req, "", err
	}
	if req.Address, err = ps.str("address", true); err != nil {
		return req, "", err
	}
	if len(req.Address) > 256 || !printable(req.Address) {
		return req, "", exgate.ParamError("address", "address must be at most 256 visible characters without spaces")
	}
	if req.Tag, err = ps.str("tag", false); err != nil {
		return req, "", err
	}
	if len(req.Tag) > 128 || !printable(req.Tag) {
		return req, "", exgate.ParamError("tag", "tag must be at most 128 visible characters without spaces")
	}
	if req.Amount, _, err = ps.positiveDecimal("amount", true); err != nil {
		return req, "", err
	}
	ref, err := ps.clientRef("clientWithdrawalId", r)
	return req, ref, err
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
