package gateway

import (
	"strings"

	"github.com/exgate/exgate"
	"github.com/exgate/exgate/exchange"
	"github.com/exgate/exgate/exchange/binance"
	"github.com/exgate/exgate/exchange/bybit"
	"github.com/exgate/exgate/exchange/gateio"
	"github.com/exgate/exgate/exchange/kraken"
	"github.com/exgate/exgate/exchange/okx"
	"github.com/exgate/exgate/exchange/sim"
)

// adapters is every exchange the gateway serves, one line each, in the
// order they are listed to people. The names, flags, environment
// variables, their validation, the usage text, `exgate doctor`'s checks,
// the console's health page and the credential check all come from this
// list; adding an exchange is its package and one line here (see
// docs/ARCHITECTURE.md, "Adding an exchange").
func adapters() []exchange.Adapter {
	return []exchange.Adapter{
		binance.Adapter(),
		kraken.Adapter(),
		gateio.Adapter(),
		okx.Adapter(),
		bybit.Adapter(),
		sim.Adapter(),
	}
}

// Adapters lists the registered adapters.
func Adapters() []exchange.Adapter { return adapters() }

// ExchangeNames lists the registered exchanges' names.
func ExchangeNames() []string {
	var names []string
	for _, a := range adapters() {
		names = append(names, a.Name)
	}
	return names
}

// ExchangeList writes the names for people: "binance, kraken, gateio or
// sim", or with sep "|" for usage lines.
func ExchangeList(sep string) string {
	names := ExchangeNames()
	if sep != "" {
		return strings.Join(names, sep)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// CheckCredential refuses a credential no registered exchange would
// accept, before it is stored (exchange-keys add, the console):
// exchange.CheckCredential over the adapter list.
func CheckCredential(c exgate.Credential) error { return exchange.CheckCredential(adapters(), c) }
