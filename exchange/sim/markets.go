package sim

import (
	"hash/fnv"

	"github.com/shopspring/decimal"

	"github.com/exgate/exgate"
)

// asset is one coin of the simulated exchange.
type asset struct {
	Code string
	// Precision is the number of decimals of a withdrawal amount.
	Precision int32
	// PriceE8 is the centre of the asset's simulated USD price, in units
	// of 1e-8 USD; USDT is pinned at 1 USD.
	PriceE8 int64
	// VolPPM is the amplitude of the finest (one minute) price noise in
	// parts per million; coarser noise grows with the square root of its
	// period (see prices.go).
	VolPPM int64
	// Initial is what a new account holds.
	Initial string
	// DepositMin and DepositMax bound the amounts of the simulated deposit
	// history, in units of 10^-Precision.
	DepositMin, DepositMax int64
	// DepositWeight is how often the asset appears in the deposit history.
	DepositWeight int
	// Networks lists the networks the asset moves on.
	Networks []network
}

// network is a chain an asset is deposited and withdrawn on.
type network struct {
	Code string
	// Format is the address format of the chain (address.go).
	Format addressFormat
	// Fee is the fixed withdrawal fee, in the asset.
	Fee string
	// MinWithdrawal is the smallest amount a withdrawal may deliver.
	MinWithdrawal string
}

// market is one listed pair. Prices are multiples of 10^-TickExp, base
// quantities multiples of 10^-StepExp, quote quantities multiples of
// 10^-QuoteStepExp.
type market struct {
	Base, Quote  string
	TickExp      int32
	StepExp      int32
	QuoteStepExp int32
	// MinQty is the smallest base quantity, MinNotional the smallest
	// quote value of an order.
	MinQty      string
	MinNotional string
	// LevelQty is the typical quantity of one book level, BaseVolume the
	// typical traded base volume of one minute, TradesPerMinute the
	// typical number of trades of one minute.
	LevelQty        string
	BaseVolume      string
	TradesPerMinute uint64
}

// The assets of the simulated exchange. Starting balances are docs/contract.md
// section 3; fees and minimums are in the range of the large exchanges.
var assetTable = []asset{
	{Code: "BTC", Precision: 8, PriceE8: 60_000e8, VolPPM: 200, Initial: "10",
		DepositMin: 100_000, DepositMax: 50_000_000, DepositWeight: 3,
		Networks: []network{{Code: "BTC", Format: formatBitcoin, Fee: "0.0002", MinWithdrawal: "0.0005"}}},
	{Code: "ETH", Precision: 8, PriceE8: 3_000e8, VolPPM: 250, Initial: "100",
		DepositMin: 1_000_000, DepositMax: 500_000_000, DepositWeight: 3,
		Networks: []network{{Code: "ETH", Format: formatEthereum, Fee: "0.0012", MinWithdrawal: "0.005"}}},
	{Code: "USDT", Precision: 6, PriceE8: 1e8, Initial: "100000",
		DepositMin: 10_000_000, DepositMax: 5_000_000_000, DepositWeight: 6,
		Networks: []network{
			{Code: "ETH", Format: formatEthereum, Fee: "4", MinWithdrawal: "10"},
			{Code: "TRX", Format: formatTron, Fee: "1", MinWithdrawal: "5"},
			{Code: "BSC", Format: formatEthereum, Fee: "0.5", MinWithdrawal: "5"},
		}},
	{Code: "SOL", Precision: 8, PriceE8: 150e8, VolPPM: 350, Initial: "500",
		DepositMin: 10_000_000, DepositMax: 5_000_000_000, DepositWeight: 2,
		Networks: []network{{Code: "SOL", Format: formatSolana, Fee: "0.008", MinWithdrawal: "0.05"}}},
	{Code: "XRP", Precision: 6, PriceE8: 60_000_000, VolPPM: 300, Initial: "1000",
		DepositMin: 10_000_000, DepositMax: 2_000_000_000, DepositWeight: 2,
		Networks: []network{{Code: "XRP", Format: formatRipple, Fee: "0.2", MinWithdrawal: "2"}}},
	{Code: "BNB", Precision: 8, PriceE8: 580e8, VolPPM: 220, Initial: "100",
		DepositMin: 1_000_000, DepositMax: 500_000_000, DepositWeight: 2,
		Networks: []network{{Code: "BSC", Format: formatEthereum, Fee: "0.0005", MinWithdrawal: "0.01"}}},
}

// The listed pairs: ticks, steps and minimums in the style of Binance's
// spot filters (PRICE_FILTER, LOT_SIZE, NOTIONAL).
var marketTable = []market{
	{Base: "BTC", Quote: "USDT", TickExp: 2, StepExp: 5, QuoteStepExp: 2,
		MinQty: "0.00001", MinNotional: "5", LevelQty: "0.4", BaseVolume: "6", TradesPerMinute: 900},
	{Base: "ETH", Quote: "USDT", TickExp: 2, StepExp: 4, QuoteStepExp: 2,
		MinQty: "0.0001", MinNotional: "5", LevelQty: "6", BaseVolume: "80", TradesPerMinute: 700},
	{Base: "ETH", Quote: "BTC", TickExp: 5, StepExp: 4, QuoteStepExp: 6,
		MinQty: "0.0001", MinNotional: "0.0001", LevelQty: "4", BaseVolume: "15", TradesPerMinute: 120},
	{Base: "SOL", Quote: "USDT", TickExp: 2, StepExp: 3, QuoteStepExp: 2,
		MinQty: "0.001", MinNotional: "5", LevelQty: "50", BaseVolume: "900", TradesPerMinute: 400},
	{Base: "XRP", Quote: "USDT", TickExp: 4, StepExp: 1, QuoteStepExp: 2,
		MinQty: "0.1", MinNotional: "5", LevelQty: "12000", BaseVolume: "150000", TradesPerMinute: 300},
	{Base: "BNB", Quote: "USDT", TickExp: 2, StepExp: 3, QuoteStepExp: 2,
		MinQty: "0.001", MinNotional: "5", LevelQty: "10", BaseVolume: "120", TradesPerMinute: 200},
}

// Deposit and withdrawal statuses of the simulated exchange, mapped to the
// normalized ones (docs/contract.md 2.3). The raw values are the sim's own and
// are kept in RawStatus like every adapter's.
const (
	rawConfirming = "CONFIRMING"
	rawCredited   = "CREDITED"
	rawFailed     = "FAILED"
	rawCompleted  = "COMPLETED"
	rawCanceled   = "CANCELED"
)

var transferStatus = map[string]exgate.TransferStatus{
	rawConfirming: exgate.TransferPending,
	rawCredited:   exgate.TransferCompleted,
	rawCompleted:  exgate.TransferCompleted,
	rawFailed:     exgate.TransferFailed,
	rawCanceled:   exgate.TransferCanceled,
}

// takerFee is the fee rate of every fill, charged in the asset received.
var takerFee = decimal.New(1, -3)

// pairInfo is a market with its decimals parsed and its hash key.
type pairInfo struct {
	market
	sym         exgate.Symbol
	key         uint64
	tick, step  decimal.Decimal
	quoteStep   decimal.Decimal
	minQty      decimal.Decimal
	minNotional decimal.Decimal
	levelSteps  int64
	volumeSteps int64
	base, quote *asset
}

// tables holds the parsed asset and market tables of one Exchange.
type tables struct {
	assets  map[string]*asset
	markets map[exgate.Symbol]*pairInfo
}

func newTables() tables {
	t := tables{assets: map[string]*asset{}, markets: map[exgate.Symbol]*pairInfo{}}
	for i := range assetTable {
		t.assets[assetTable[i].Code] = &assetTable[i]
	}
	for _, m := range marketTable {
		p := &pairInfo{
			market:      m,
			sym:         exgate.Symbol{Base: m.Base, Quote: m.Quote},
			key:         hashString("market/" + m.Base + "/" + m.Quote),
			tick:        decimal.New(1, -m.TickExp),
			step:        decimal.New(1, -m.StepExp),
			quoteStep:   decimal.New(1, -m.QuoteStepExp),
			minQty:      decimal.RequireFromString(m.MinQty),
			minNotional: decimal.RequireFromString(m.MinNotional),
			base:        t.assets[m.Base],
			quote:       t.assets[m.Quote],
		}
		p.levelSteps = decimal.RequireFromString(m.LevelQty).Shift(m.StepExp).IntPart()
		p.volumeSteps = decimal.RequireFromString(m.BaseVolume).Shift(m.StepExp).IntPart()
		t.markets[p.sym] = p
	}
	return t
}

// market finds a listed pair. A pair listed only the other way round is
// UNKNOWN_SYMBOL naming the listed one.
func (t tables) market(s exgate.Symbol) (*pairInfo, error) {
	if p, ok := t.markets[s]; ok {
		return p, nil
	}
	if _, ok := t.markets[s.Inverse()]; ok {
		return nil, exgate.Errorf(exgate.CodeUnknownSymbol,
			"%s is not listed on sim; the pair is listed the other way round as %s", s, s.Inverse())
	}
	return nil, exgate.Errorf(exgate.CodeUnknownSymbol, "%s is not listed on sim", s)
}

// network finds an asset's network; the errors name the parameter.
func (t tables) network(assetCode, networkCode string) (*asset, *network, error) {
	a, ok := t.assets[assetCode]
	if !ok {
		return nil, nil, exgate.ParamError("asset", "%s is not an asset of sim (%s)", assetCode, t.assetList())
	}
	for i := range a.Networks {
		if a.Networks[i].Code == networkCode {
			return a, &a.Networks[i], nil
		}
	}
	codes := make([]string, len(a.Networks))
	for i, n := range a.Networks {
		codes[i] = n.Code
	}
	return nil, nil, exgate.ParamError("network", "%s moves on %v on sim, not %q", assetCode, codes, networkCode)
}

func (t tables) assetList() string {
	s := ""
	for i, a := range assetTable {
		if i > 0 {
			s += ", "
		}
		s += a.Code
	}
	return s
}

// hashString is the FNV-1a hash of s, the key of a market or asset in the
// price and history generators.
func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
