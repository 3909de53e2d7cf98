package gateway

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/httpapi"
)

// routeLimits reads --market-data-limit, --order-limit and
// --withdrawal-limit (whose defaults are httpapi.DefaultRouteLimits). An
// empty value is no limit, as a zero ClientRate is: a Config built
// without flags (the bench, tests) has none.
func (c *Config) routeLimits() (httpapi.RouteLimits, error) {
	var l httpapi.RouteLimits
	var errs []error
	for _, f := range []struct {
		flag, env, value string
		dst              *exgate.RateLimit
	}{
		{"--market-data-limit", "EXGATE_MARKET_DATA_LIMIT", c.MarketDataLimit, &l.MarketData},
		{"--order-limit", "EXGATE_ORDER_LIMIT", c.OrderLimit, &l.Orders},
		{"--withdrawal-limit", "EXGATE_WITHDRAWAL_LIMIT", c.WithdrawalLimit, &l.Withdrawals},
	} {
		if f.value == "" {
			continue
		}
		rl, err := ParseRateLimit(f.value)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", f.flag, f.env, err))
			continue
		}
		*f.dst = rl
	}
	return l, errors.Join(errs...)
}

// ParseRateLimit reads "N/period" ("200/10s"): N requests per period,
// all of them allowed at once. "0" is no limit.
func ParseRateLimit(s string) (exgate.RateLimit, error) {
	if s == "0" {
		return exgate.RateLimit{}, nil
	}
	n, p, ok := strings.Cut(s, "/")
	rate, err := strconv.Atoi(n)
	if !ok || err != nil || rate <= 0 {
		return exgate.RateLimit{}, fmt.Errorf("%q must be N/period with N a positive integer (200/10s), or 0 for none", s)
	}
	period, err := time.ParseDuration(p)
	if err != nil || period <= 0 {
		return exgate.RateLimit{}, fmt.Errorf("%q must be N/period with a positive period such as 10s or 1m", s)
	}
	return exgate.RateLimit{Rate: rate, Period: period, Burst: rate}, nil
}

// rateText writes a limit as ParseRateLimit reads it ("200/10s").
func rateText(l exgate.RateLimit) string {
	if l.Rate == 0 {
		return "0"
	}
	return strconv.Itoa(l.Rate) + "/" + l.Period.String()
}
