package exgate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Risk controls and the kill switch (docs/contract.md 2.8, docs/risk.md):
// the limits an operator sets per client key, the halts, and the usage
// the store keeps exact under concurrency by reserving it in the same
// transaction that records an order's or withdrawal's intent.

// Risk limit names, as `exgate risk set --clear` and the refusals' `limit`
// member spell them.
const (
	LimitSymbols          = "symbols"
	LimitMaxOrderNotional = "maxOrderNotional"
	LimitPriceBand        = "priceBand"
	LimitMaxOpenOrders    = "maxOpenOrders"
	LimitDailyNotional    = "dailyNotional"
	LimitDailyWithdrawal  = "dailyWithdrawal"
)

// RiskLimitNames lists every limit, in the order `risk show` prints them.
var RiskLimitNames = []string{LimitSymbols, LimitMaxOrderNotional, LimitPriceBand,
	LimitMaxOpenOrders, LimitDailyNotional, LimitDailyWithdrawal}

// RiskLimits are a client key's limits; a nil field is no limit. The
// amounts are in USD, PriceBand in percent.
type RiskLimits struct {
	Symbols          []Symbol
	MaxOrderNotional *decimal.Decimal
	PriceBand        *decimal.Decimal
	MaxOpenOrders    *int64
	DailyNotional    *decimal.Decimal
	DailyWithdrawal  *decimal.Decimal
}

// Empty reports whether no limit is set.
func (l RiskLimits) Empty() bool {
	return l.Symbols == nil && l.MaxOrderNotional == nil && l.PriceBand == nil &&
		l.MaxOpenOrders == nil && l.DailyNotional == nil && l.DailyWithdrawal == nil
}

// Merge returns l with the limits set in set replaced and the named ones
// cleared. An unknown name in clear is an error.
func (l RiskLimits) Merge(set RiskLimits, clear []string) (RiskLimits, error) {
	if set.Symbols != nil {
		l.Symbols = set.Symbols
	}
	l.MaxOrderNotional = cmpOr(set.MaxOrderNotional, l.MaxOrderNotional)
	l.PriceBand = cmpOr(set.PriceBand, l.PriceBand)
	l.MaxOpenOrders = cmpOr(set.MaxOpenOrders, l.MaxOpenOrders)
	l.DailyNotional = cmpOr(set.DailyNotional, l.DailyNotional)
	l.DailyWithdrawal = cmpOr(set.DailyWithdrawal, l.DailyWithdrawal)
	for _, name := range clear {
		switch name {
		case LimitSymbols:
			l.Symbols = nil
		case LimitMaxOrderNotional:
			l.MaxOrderNotional = nil
		case LimitPriceBand:
			l.PriceBand = nil
		case LimitMaxOpenOrders:
			l.MaxOpenOrders = nil
		case LimitDailyNotional:
			l.DailyNotional = nil
		case LimitDailyWithdrawal:
			l.DailyWithdrawal = nil
		default:
			return l, fmt.Errorf("unknown limit %q in --clear (limits: %s)", Clip(name, 40), strings.Join(RiskLimitNames, ", "))
		}
	}
	return l, nil
}

func cmpOr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// AllowsSymbol reports whether the symbols limit lets sym trade, named
// either way round.
func (l RiskLimits) AllowsSymbol(sym Symbol) bool {
	if l.Symbols == nil {
		return true
	}
	return slices.Contains(l.Symbols, sym) || slices.Contains(l.Symbols, sym.Inverse())
}

// riskLimitsJSON is how limits are written: only the limits set, symbols
// as BASE/QUOTE, maxOpenOrders an integer, the others decimal strings.
type riskLimitsJSON struct {
	Symbols          []string `json:"symbols,omitempty"`
	MaxOrderNotional *string  `json:"maxOrderNotional,omitempty"`
	PriceBand        *string  `json:"priceBand,omitempty"`
	MaxOpenOrders    *int64   `json:"maxOpenOrders,omitempty"`
	DailyNotional    *string  `json:"dailyNotional,omitempty"`
	DailyWithdrawal  *string  `json:"dailyWithdrawal,omitempty"`
}

func decText(d *decimal.Decimal) *string {
	if d == nil {
		return nil
	}
	s := d.String()
	return &s
}

func parseDecText(name string, s *string) (*decimal.Decimal, error) {
	if s == nil {
		return nil, nil
	}
	d, err := ParseRiskAmount(name, *s)
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// MarshalJSON writes the limits set (docs/contract.md 2.8).
func (l RiskLimits) MarshalJSON() ([]byte, error) {
	j := riskLimitsJSON{
		MaxOrderNotional: decText(l.MaxOrderNotional), PriceBand: decText(l.PriceBand),
		MaxOpenOrders: l.MaxOpenOrders, DailyNotional: decText(l.DailyNotional),
		DailyWithdrawal: decText(l.DailyWithdrawal),
	}
	if l.Symbols != nil {
		j.Symbols = make([]string, len(l.Symbols))
		for i, s := range l.Symbols {
			j.Symbols[i] = s.String()
		}
		if len(j.Symbols) == 0 {
			// An empty list allows no pair; it must read back as such.
			return json.Marshal(struct {
				Symbols []string `json:"symbols"`
				riskLimitsJSON
			}{[]string{}, j})
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (l *RiskLimits) UnmarshalJSON(b []byte) error {
	var j riskLimitsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	var out RiskLimits
	var err error
	if j.Symbols != nil || bytes.Contains(b, []byte(`"symbols"`)) {
		if out.Symbols, err = ParseRiskSymbols(strings.Join(j.Symbols, ",")); err != nil {
			return err
		}
		if out.Symbols == nil {
			out.Symbols = []Symbol{}
		}
	}
	if out.MaxOrderNotional, err = parseDecText(LimitMaxOrderNotional, j.MaxOrderNotional); err != nil {
		return err
	}
	if out.PriceBand, err = parseDecText(LimitPriceBand, j.PriceBand); err != nil {
		return err
	}
	if out.DailyNotional, err = parseDecText(LimitDailyNotional, j.DailyNotional); err != nil {
		return err
	}
	if out.DailyWithdrawal, err = parseDecText(LimitDailyWithdrawal, j.DailyWithdrawal); err != nil {
		return err
	}
	out.MaxOpenOrders = j.MaxOpenOrders
	*l = out
	return nil
}

// ParseRiskAmount reads a limit's amount: a plain decimal >= 0.
func ParseRiskAmount(name, s string) (decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		return decimal.Decimal{}, fmt.Errorf("%s must not be negative, not %s", name, Clip(s, 40))
	}
	d, err := ParseDecimal(s)
	if err != nil || !IsPlainDecimal(s) {
		return decimal.Decimal{}, fmt.Errorf("%s must be a decimal number, not %q", name, Clip(s, 40))
	}
	if d.IsNegative() {
		return decimal.Decimal{}, fmt.Errorf("%s must not be negative, not %s", name, s)
	}
	return d, nil
}

// ParseRiskCount reads maxOpenOrders: an integer >= 0.
func ParseRiskCount(name, s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s must be a whole number, not %q", name, Clip(s, 40))
	}
	if n < 0 {
		return 0, fmt.Errorf("%s must not be negative, not %d", name, n)
	}
	return n, nil
}

// ParseRiskSymbols reads a comma-separated list of BASE/QUOTE pairs
// (upper-cased); an empty string is the empty list (nil).
func ParseRiskSymbols(s string) ([]Symbol, error) {
	var out []Symbol
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		base, quote, ok := strings.Cut(part, "/")
		if !ok || !isAssetCode(base) || !isAssetCode(quote) || strings.EqualFold(base, quote) {
			return nil, fmt.Errorf("symbols: %q is not a pair written BASE/QUOTE, such as BTC/USDT", Clip(part, 40))
		}
		sym := Symbol{Base: NormalizeAsset(base), Quote: NormalizeAsset(quote)}
		if !slices.Contains(out, sym) {
			out = append(out, sym)
		}
	}
	return out, nil
}

func isAssetCode(s string) bool {
	if len(s) == 0 || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// RiskHalt is a halt of trading: of one client key, or of every key when
// APIKey is RiskHaltAll.
type RiskHalt struct {
	APIKey    string
	Reason    string
	CreatedAt time.Time
}

// RiskHaltAll is the APIKey of a global halt.
const RiskHaltAll = "*"

// RiskUsage is what a client key has used of its limits: the daily
// figures of one UTC day (Day, YYYY-MM-DD) in USD, and its open orders.
type RiskUsage struct {
	Day             string
	DailyNotional   decimal.Decimal
	DailyWithdrawal decimal.Decimal
	OpenOrders      int64
}

// RiskDay is the UTC day t counts for, as YYYY-MM-DD.
func RiskDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// RiskReservation is what an intent reserves of its client key's limits.
// It rides on the Intent that CreateIntent records: the store checks the
// maxima and reserves the amounts in the same transaction (atomic across
// instances), and settles the reservation each time UpdateIntent records
// the intent's answer (SettleRisk).
type RiskReservation struct {
	Day string
	// Notional is the USD amount charged now: an order's notional to
	// DailyNotional, a withdrawal's amount to DailyWithdrawal.
	Notional decimal.Decimal
	// Quote is the asset the order's notional is counted in and QuoteUSD
	// its USD value per unit, fixed when the order was accepted, so that
	// fills and cancels settle the charge in the same terms.
	Quote    string
	QuoteUSD decimal.Decimal
	// Open: the intent counts as one open order while it is not final.
	Open bool
	// Limit order price, for the open remainder; zero for market orders.
	Price decimal.Decimal
	// The maxima checked when the reservation is made; nil: none.
	MaxDailyNotional   *decimal.Decimal
	MaxDailyWithdrawal *decimal.Decimal
	MaxOpenOrders      *int64
}

// RiskCheck is a reservation that would be made, checked against usage:
// nil when it fits, otherwise the RISK_LIMIT_EXCEEDED refusal.
func (r RiskReservation) Check(kind IntentKind, u RiskUsage) error {
	if kind == IntentWithdrawal {
		if r.MaxDailyWithdrawal != nil {
			v := u.DailyWithdrawal.Add(r.Notional)
			if v.GreaterThan(*r.MaxDailyWithdrawal) {
				return RiskRefusal(LimitDailyWithdrawal, v.String(), r.MaxDailyWithdrawal.String(),
					"the key's withdrawals of %s UTC would come to %s USD, over its daily limit of %s USD", u.Day, v, r.MaxDailyWithdrawal)
			}
		}
		return nil
	}
	if r.MaxOpenOrders != nil && r.Open {
		v := u.OpenOrders + 1
		if v > *r.MaxOpenOrders {
			return RiskRefusal(LimitMaxOpenOrders, strconv.FormatInt(v, 10), strconv.FormatInt(*r.MaxOpenOrders, 10),
				"this order would be the key's open order number %d, over its limit of %d", v, *r.MaxOpenOrders)
		}
	}
	if r.MaxDailyNotional != nil {
		v := u.DailyNotional.Add(r.Notional)
		if v.GreaterThan(*r.MaxDailyNotional) {
			return RiskRefusal(LimitDailyNotional, v.String(), r.MaxDailyNotional.String(),
				"the key's orders of %s UTC would come to %s USD, over its daily limit of %s USD", u.Day, v, r.MaxDailyNotional)
		}
	}
	return nil
}

// RiskRefusal is the 403 RISK_LIMIT_EXCEEDED refusal of limit, with the
// value the request would bring the figure to and the limit (empty max:
// no max member, as for symbols).
func RiskRefusal(limit, value, max, format string, args ...any) *Error {
	e := Errorf(CodeRiskLimitExceeded, format, args...)
	e.Risk = &RiskProblem{Limit: limit, Value: value, Max: max}
	return e
}

// TradingHalted is the 403 TRADING_HALTED refusal of a halted key.
func TradingHalted(h RiskHalt) *Error {
	who := "this API key"
	if h.APIKey == RiskHaltAll {
		who = "every API key"
	}
	e := Errorf(CodeTradingHalted, "trading is halted for %s since %s: %s; cancels and reads still work",
		who, h.CreatedAt.UTC().Format(time.RFC3339), h.Reason)
	reason := h.Reason
	e.Risk = &RiskProblem{Reason: &reason}
	return e
}

// RiskProblem holds the members a risk refusal adds to its problem.
type RiskProblem struct {
	Limit, Value, Max string
	// Reason is a halt's reason (TRADING_HALTED).
	Reason *string
}

// SettleRisk is a reservation's charge and open state once an intent's
// answer is (answer, response): an unknown outcome keeps the reservation
// as it is (known false); a refusal gives everything back; an order gives
// back what did not fill once it is final, and counts its open remainder
// at its limit price while it rests; a withdrawal that failed or was
// canceled gives its amount back.
func SettleRisk(kind IntentKind, r RiskReservation, state IntentState, answer IntentAnswer, response []byte) (charge decimal.Decimal, open, known bool) {
	if charge, open, known, done := settleWithoutRecord(r, state, answer); done {
		return charge, open, known
	}
	if kind == IntentWithdrawal {
		var w struct {
			Status TransferStatus `json:"status"`
		}
		if err := json.Unmarshal(response, &w); err != nil {
			return r.Notional, false, false
		}
		return settleWithdrawal(r, w.Status)
	}
	var o Order
	if err := json.Unmarshal(response, &o); err != nil {
		return r.Notional, r.Open, false
	}
	return settleOrder(r, o)
}

// RiskSettlement is SettleRisk's answer for one outcome of an intent,
// worked out by the journal from the reservation it recorded the intent
// with and the answer it holds decoded (SettleRiskRecord).
type RiskSettlement struct {
	// Reserved is the reservation it was worked out from: it holds only
	// while the intent's stored reservation is still that one.
	Reserved    RiskReservation
	Charge      decimal.Decimal
	Open, Known bool
}

// SettleRiskRecord is SettleRisk for an answer its caller holds decoded
// (an Order, or a Withdrawal), without encoding and decoding it again;
// ok is false for a record of another type.
func SettleRiskRecord(kind IntentKind, r RiskReservation, state IntentState, answer IntentAnswer, record any) (s RiskSettlement, ok bool) {
	s.Reserved = r
	if charge, open, known, done := settleWithoutRecord(r, state, answer); done {
		s.Charge, s.Open, s.Known = charge, open, known
		return s, true
	}
	switch rec := record.(type) {
	case Order:
		if kind != IntentWithdrawal {
			s.Charge, s.Open, s.Known = settleOrder(r, rec)
			return s, true
		}
	case Withdrawal:
		if kind == IntentWithdrawal {
			s.Charge, s.Open, s.Known = settleWithdrawal(r, rec.Status)
			return s, true
		}
	}
	return s, false
}

// settleWithoutRecord settles what needs no record (done): an unknown
// outcome, and a refusal.
func settleWithoutRecord(r RiskReservation, state IntentState, answer IntentAnswer) (charge decimal.Decimal, open, known, done bool) {
	switch {
	case state == IntentSubmitting || state == IntentUnknown || answer == AnswerNone || answer == AnswerPending:
		return r.Notional, r.Open, false, true
	case answer != AnswerRecord:
		return decimal.Zero, false, true, true
	}
	return decimal.Zero, false, false, false
}

func settleWithdrawal(r RiskReservation, status TransferStatus) (charge decimal.Decimal, open, known bool) {
	if status == TransferFailed || status == TransferCanceled {
		return decimal.Zero, false, true
	}
	return r.Notional, false, true
}

func settleOrder(r RiskReservation, o Order) (charge decimal.Decimal, open, known bool) {
	if o.Type == OrderTypeMarket && !o.Status.Final() && o.ExecutedQuantity == nil {
		// A market order accepted but not yet reported filled: its
		// notional stays reserved as estimated.
		return r.Notional, r.Open, true
	}
	var quoteDone decimal.Decimal
	exec := numberOr(o.ExecutedQuantity)
	switch r.Quote {
	case o.Asset1:
		// An order named the other way round: the quote is asset1.
		quoteDone = exec
	default:
		if o.QuoteQuantity != nil {
			quoteDone = o.QuoteQuantity.Decimal
		} else {
			quoteDone = exec.Mul(numberOr(o.AveragePrice))
		}
	}
	charge = quoteDone
	open = !o.Status.Final()
	if open && o.Type == OrderTypeLimit {
		rest := o.Quantity.Decimal.Sub(exec)
		price := r.Price
		if o.Price != nil {
			price = o.Price.Decimal
		}
		if rest.IsPositive() {
			charge = charge.Add(rest.Mul(price))
		}
	}
	return charge.Mul(r.QuoteUSD), open && r.Open, true
}

func numberOr(n *Number) decimal.Decimal {
	if n == nil {
		return decimal.Zero
	}
	return n.Decimal
}

// RiskAccount is a client key's risk state, as `exgate risk show` prints
// it and GET /v1/account/risk answers (docs/contract.md 2.8).
type RiskAccount struct {
	APIKey string     `json:"apiKey"`
	State  string     `json:"state"`
	Reason *string    `json:"reason"`
	Limits RiskLimits `json:"limits"`
	Usage  struct {
		DailyNotional   string `json:"dailyNotional"`
		DailyWithdrawal string `json:"dailyWithdrawal"`
		OpenOrders      int64  `json:"openOrders"`
	} `json:"usage"`
	Day string `json:"day"`
}

// Risk account states.
const (
	RiskStateActive = "active"
	RiskStateHalted = "halted"
)

// NewRiskAccount assembles a key's risk state; halt is nil when the key
// is not halted.
func NewRiskAccount(apiKey string, limits RiskLimits, halt *RiskHalt, u RiskUsage) RiskAccount {
	a := RiskAccount{APIKey: apiKey, State: RiskStateActive, Limits: limits, Day: u.Day}
	if halt != nil {
		a.State = RiskStateHalted
		reason := halt.Reason
		a.Reason = &reason
	}
	a.Usage.DailyNotional = u.DailyNotional.String()
	a.Usage.DailyWithdrawal = u.DailyWithdrawal.String()
	a.Usage.OpenOrders = u.OpenOrders
	return a
}

// HaltOf returns the halt that holds for apiKey (its own, else the
// global one), or nil.
func HaltOf(halts []RiskHalt, apiKey string) *RiskHalt {
	var global *RiskHalt
	for i := range halts {
		switch halts[i].APIKey {
		case apiKey:
			return &halts[i]
		case RiskHaltAll:
			global = &halts[i]
		}
	}
	return global
}

// RiskStore is the part of a Store that keeps the risk controls. The
// reservations themselves ride on CreateIntent (Intent.Risk) and are
// settled by UpdateIntent.
type RiskStore interface {
	// SetRiskLimits merges set and clear (RiskLimits.Merge) into a client
	// key's limits in one transaction and returns them; an error wrapping
	// ErrNotFound when the key does not exist.
	SetRiskLimits(ctx context.Context, apiKey string, set RiskLimits, clear []string) (RiskLimits, error)
	// AllRiskLimits returns the limits of every key that has some.
	AllRiskLimits(ctx context.Context) (map[string]RiskLimits, error)
	// HaltTrading records a halt (h.APIKey a client key or RiskHaltAll),
	// replacing the key's earlier halt; an error wrapping ErrNotFound
	// for an unknown client key.
	HaltTrading(ctx context.Context, h RiskHalt) error
	// ResumeTrading ends the halt of apiKey, or every halt when apiKey is
	// RiskHaltAll, and returns how many it ended.
	ResumeTrading(ctx context.Context, apiKey string) (int, error)
	// RiskHalts returns the halts in force, oldest first.
	RiskHalts(ctx context.Context) ([]RiskHalt, error)
	// RiskUsage returns a key's usage: the daily figures of day and its
	// open orders (zero when it has none).
	RiskUsage(ctx context.Context, apiKey, day string) (RiskUsage, error)
}

// ErrRiskNoValue: an amount could not be valued in USD (fail closed).
var ErrRiskNoValue = errors.New("no USD value")

type riskKey struct{}

// ContextWithRisk returns ctx carrying the reservation the risk checks
// made for the order or withdrawal of this request: the journal puts it
// on the intent it records (Intent.Risk), so that the reservation is made
// in the intent's own transaction.
func ContextWithRisk(ctx context.Context, r *RiskReservation) context.Context {
	return context.WithValue(ctx, riskKey{}, r)
}

// RiskFromContext returns the reservation ContextWithRisk put in ctx, or
// nil.
func RiskFromContext(ctx context.Context) *RiskReservation {
	r, _ := ctx.Value(riskKey{}).(*RiskReservation)
	return r
}
